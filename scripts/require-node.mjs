// Stops `npm start` and `npm test` at once on a Node.js older than package.json's engines.node, naming the one needed.
import { readFileSync } from "node:fs";

const { engines } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const needed = Number(/(\d+)/.exec(engines.node)?.[1]);
const major = Number(process.versions.node.split(".")[0]);
if (major < needed) {
  console.error(
    `forkpoint needs Node.js ${needed} or later (package.json engines.node "${engines.node}"); this is Node.js ${process.versions.node}.`,
  );
  process.exit(1);
}
