// The agent name this browser claims tasks as, remembered in localStorage.
import { useEffect, useState } from "preact/hooks";

const KEY = "cairn.agent";
const listeners = new Set<(v: string) => void>();

export function readAgent(): string {
  try {
    return localStorage.getItem(KEY) ?? "";
  } catch {
    return "";
  }
}

export function writeAgent(name: string): void {
  try {
    localStorage.setItem(KEY, name);
  } catch {
    // private mode: remember for this page only
  }
  for (const l of listeners) l(name);
}

export function useAgent(): [string, (v: string) => void] {
  const [agent, setAgent] = useState(readAgent);
  useEffect(() => {
    listeners.add(setAgent);
    // A write between the first render and this subscription would be missed.
    setAgent(readAgent());
    return () => void listeners.delete(setAgent);
  }, []);
  return [agent, writeAgent];
}
