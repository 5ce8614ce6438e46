// Fails when src/api/schema.d.ts differs from what the committed OpenAPI
// document generates: regenerates into a temp file and compares.
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateTypes, openapiPath, schemaPath } from "./api-types.mjs";

let fresh;
try {
  fresh = await generateTypes();
} catch (err) {
  console.error(`drift check: cannot generate types from ${openapiPath}: ${err.message}`);
  process.exit(1);
}
const tmp = join(await mkdtemp(join(tmpdir(), "cairn-api-types-")), "schema.d.ts");
await writeFile(tmp, fresh);
const committed = await readFile(schemaPath, "utf8").catch(() => "");
if (committed === fresh) {
  console.log(`drift check: src/api/schema.d.ts matches ${openapiPath}`);
  process.exit(0);
}
const a = committed.split("\n");
const b = fresh.split("\n");
let line = 0;
while (line < a.length && line < b.length && a[line] === b[line]) line++;
console.error(
  [
    "drift check FAILED: web-client/src/api/schema.d.ts is not what openapi/openapi.json generates.",
    `  first difference at line ${line + 1}:`,
    `    committed: ${a[line] ?? "<end of file>"}`,
    `    generated: ${b[line] ?? "<end of file>"}`,
    `  freshly generated copy: ${tmp}`,
    "  fix: cd web-client && npm run gen:api   (then commit src/api/schema.d.ts)",
  ].join("\n"),
);
process.exit(1);
