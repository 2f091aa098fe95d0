// A tiny RFC 6902 applier: add / remove / replace (plus move, copy and test for completeness)
// on objects and arrays. applyPatch never mutates its input: containers on the touched paths are
// copied, everything else is shared, so a renderer can compare old and new views by identity.

function parse(path) {
  if (path === "") return [];
  if (path[0] !== "/") throw new Error(`bad JSON pointer: ${path}`);
  return path.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function index(arr, key, forAdd) {
  if (forAdd && key === "-") return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(key)) throw new Error(`bad array index: ${key}`);
  const i = Number(key);
  if (i > arr.length || (!forAdd && i === arr.length)) throw new Error(`index out of range: ${key}`);
  return i;
}

function clone(value) {
  return Array.isArray(value) ? value.slice() : { ...value };
}

// Walks to the parent of `keys`, copying each container on the way; returns [root, parent].
function walk(root, keys) {
  const top = clone(root);
  let node = top;
  for (let k = 0; k < keys.length - 1; k++) {
    const key = Array.isArray(node) ? index(node, keys[k], false) : keys[k];
    const child = node[key];
    if (child === null || typeof child !== "object") throw new Error(`no container at /${keys.slice(0, k + 1).join("/")}`);
    node[key] = clone(child);
    node = node[key];
  }
  return [top, node];
}

function get(doc, keys) {
  let node = doc;
  for (const k of keys) {
    if (node === null || typeof node !== "object") throw new Error("path not found");
    node = Array.isArray(node) ? node[index(node, k, false)] : node[k];
  }
  return node;
}

function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => deepEqual(a[k], b[k]));
}

function applyOp(doc, op) {
  const keys = parse(op.path);
  switch (op.op) {
    case "add":
    case "replace": {
      if (keys.length === 0) return op.value;
      const [root, parent] = walk(doc, keys);
      const last = keys[keys.length - 1];
      if (Array.isArray(parent)) {
        const i = index(parent, last, op.op === "add");
        if (op.op === "add") parent.splice(i, 0, op.value);
        else parent[i] = op.value;
      } else {
        if (op.op === "replace" && !(last in parent)) throw new Error(`replace of a missing key: ${op.path}`);
        parent[last] = op.value;
      }
      return root;
    }
    case "remove": {
      const [root, parent] = walk(doc, keys);
      const last = keys[keys.length - 1];
      if (Array.isArray(parent)) parent.splice(index(parent, last, false), 1);
      else {
        if (!(last in parent)) throw new Error(`remove of a missing key: ${op.path}`);
        delete parent[last];
      }
      return root;
    }
    case "copy":
      return applyOp(doc, { op: "add", path: op.path, value: get(doc, parse(op.from)) });
    case "move": {
      const value = get(doc, parse(op.from));
      return applyOp(applyOp(doc, { op: "remove", path: op.from }), { op: "add", path: op.path, value });
    }
    case "test":
      if (!deepEqual(get(doc, keys), op.value)) throw new Error(`test failed at ${op.path}`);
      return doc;
    default:
      throw new Error(`unknown op ${op.op}`);
  }
}

/** The document after `ops`; throws on a malformed patch (the caller then asks for a sync). */
export function applyPatch(doc, ops) {
  let out = doc;
  for (const op of ops) out = applyOp(out, op);
  return out;
}
