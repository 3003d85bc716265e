// Stops `npm start` and `npm test` at once on a Node.js older than package.json's engines.node, naming the one needed.
import { readFileSync } from "node:fs";

const { engines } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const [needMajor, needMinor] = /(\d+)\.(\d+)/.exec(engines.node).slice(1).map(Number);
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < needMajor || (major === needMajor && minor < needMinor)) {
  console.error(
    `forkpoint needs Node.js ${needMajor}.${needMinor} or later (package.json engines.node "${engines.node}"); this is Node.js ${process.versions.node}.`,
  );
  process.exit(1);
}
