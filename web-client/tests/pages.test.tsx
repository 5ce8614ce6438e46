// usePages: the first page, then each `more()` appends the next page by its
// cursor; the last page offers no more; a failed page keeps what was shown.
import { render } from "preact";
import { act } from "preact/test-utils";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Outcome } from "../src/api/client";
import { type Page, type Pages, usePages } from "../src/lib/load";
import { countText } from "../src/ui/common";

let root: HTMLElement;
beforeEach(() => {
  root = document.createElement("div");
  document.body.append(root);
});
afterEach(() => {
  render(null, root);
  root.remove();
});

const PAGES: Record<string, Page<number>> = {
  start: { items: [1, 2], next_cursor: "c2", total: 5, total_is_lower_bound: false },
  c2: { items: [3, 4], next_cursor: "c3", total: 5, total_is_lower_bound: false },
  c3: { items: [5], next_cursor: null, total: 5, total_is_lower_bound: false },
};

function mount(fetch: (cursor?: string) => Promise<Outcome<Page<number>>>): { current: Pages<number> } {
  const seen = { current: undefined as unknown as Pages<number> };
  function Probe() {
    seen.current = usePages(fetch, ["k"]);
    return null;
  }
  act(() => render(<Probe />, root));
  return seen;
}

const settle = () => act(() => new Promise((r) => setTimeout(r, 0)));

it("appends pages by cursor until the last one", async () => {
  const asked: (string | undefined)[] = [];
  const pages = mount(async (cursor) => {
    asked.push(cursor);
    return { ok: true, data: PAGES[cursor ?? "start"] } as Outcome<Page<number>>;
  });
  await settle();
  expect(pages.current.items).toEqual([1, 2]);
  act(() => pages.current.more!());
  await settle();
  expect(pages.current.items).toEqual([1, 2, 3, 4]);
  act(() => pages.current.more!());
  await settle();
  expect(pages.current.items).toEqual([1, 2, 3, 4, 5]);
  expect(pages.current.more).toBeNull();
  expect(asked).toEqual([undefined, "c2", "c3"]);
});

it("a failed page keeps the items shown and reports the error", async () => {
  const pages = mount(async (cursor) =>
    cursor
      ? ({ ok: false, error: { status: 503, body: { code: "store_busy" } } } as unknown as Outcome<Page<number>>)
      : ({ ok: true, data: PAGES.start } as Outcome<Page<number>>),
  );
  await settle();
  act(() => pages.current.more!());
  await settle();
  expect(pages.current.items).toEqual([1, 2]);
  expect(pages.current.moreError?.status).toBe(503);
  expect(pages.current.more).not.toBeNull();
});

describe("a total counted up to the server's cap", () => {
  it("reads as exact below the cap and as at-least at it", () => {
    expect(countText(7, false)).toBe("7");
    expect(countText(1000, true)).toBe("1000+");
  });
});
