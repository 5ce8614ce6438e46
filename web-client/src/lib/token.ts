// The bearer token for a cairn started with `--token` (CAIRN_TOKEN), kept in
// this browser's localStorage and sent on every API request.
const KEY = "cairn.token";
/** Dispatched on window when the token changes, so views can reload. */
export const TOKEN_CHANGED = "cairn:token";

export function readToken(): string {
  try {
    return localStorage.getItem(KEY) ?? "";
  } catch {
    return "";
  }
}

export function writeToken(token: string): void {
  try {
    if (token) localStorage.setItem(KEY, token);
    else localStorage.removeItem(KEY);
  } catch {
    // private mode: nothing to keep
  }
  dispatchEvent(new Event(TOKEN_CHANGED));
}
