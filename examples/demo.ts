// `npm start`'s demo as a script: `tsx examples/demo.ts [db] [files]` runs `forkpoint demo` on that database (default
// ./forkpoint.db) with its tool writing under that directory. The scenario itself is src/cli/demo/scenario.ts.
import { main } from "../src/cli/main.js";

const [db = "./forkpoint.db", files] = process.argv.slice(2);
await main(["node", "forkpoint", "--db", db, "demo", ...(files ? ["--files", files] : [])]);
