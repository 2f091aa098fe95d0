// The table's elements, built by table.js once per stage and language and updated in place by each
// part; null while no table is shown. Only setTable assigns it: the parts read the live binding.
import { S } from "../core.js";

export let T = null;

export function setTable(elements) {
  T = elements;
}

export function isMyTurn(g) {
  if (!g || g.winner) return false;
  if (g.pending) return g.pending.player === S.you;
  return g.turn === S.you;
}
