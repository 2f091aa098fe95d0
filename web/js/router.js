// Where the screens meet: a room and the landing page register here what the others may ask of
// them (open a room, leave it, build it again), so the shell and the landing page reach a room
// without importing it. (They imported each other: landing -> room -> shell -> room, a circle.)
const screens = new Map();

/** `name`'s handler, given by the module that owns it. */
export function register(name, handler) {
  screens.set(name, handler);
}

/** Runs `name`'s handler with `args` (nothing, before its module has registered it). */
export function go(name, ...args) {
  return screens.get(name)?.(...args);
}
