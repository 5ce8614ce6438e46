// Regenerates src/api/schema.d.ts from ../openapi/openapi.json (or $CAIRN_OPENAPI).
import { writeFile } from "node:fs/promises";
import { generateTypes, openapiPath, schemaPath } from "./api-types.mjs";

await writeFile(schemaPath, await generateTypes());
console.log(`wrote ${schemaPath} from ${openapiPath}`);
