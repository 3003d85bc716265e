// Where `forkpoint mcp` keeps its database by default: the user's data directory, never inside a workspace it captures.
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/**
 * `$XDG_DATA_HOME/forkpoint/forkpoint.db`, else the platform's place for an application's data: ~/.local/share on
 * Linux and the BSDs, ~/Library/Application Support on macOS, %LOCALAPPDATA% on Windows.
 */
export function defaultDatabasePath(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const home = env.HOME || homedir();
  let base: string;
  // The XDG specification: a relative XDG_DATA_HOME is invalid and ignored.
  if (env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME)) base = env.XDG_DATA_HOME;
  else if (platform === "darwin") base = join(home, "Library", "Application Support");
  else if (platform === "win32") base = env.LOCALAPPDATA || join(home, "AppData", "Local");
  else base = join(home, ".local", "share");
  return join(base, "forkpoint", "forkpoint.db");
}
