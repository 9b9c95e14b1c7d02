// How the extension starts `syncadvisor server`: pure functions of the settings and the
// environment, with no `vscode` import, so that `npm test` checks them in plain Node.
import type { DocumentSelector } from "vscode-languageclient";

// Saved Python files, unsaved ones, and the Python cells of Jupyter notebooks (as LSP
// 3.17 notebook cell filters: a server with notebook sync gets the notebook as one
// document, and a server without it gets each cell as a text document).
export const DOCUMENTS: DocumentSelector = [
    { scheme: "file", language: "python" },
    { scheme: "untitled", language: "python" },
    { notebook: { notebookType: "jupyter-notebook" }, language: "python" },
];

export interface Settings {
    /** `syncadvisor.path`: the `syncadvisor` executable ("" when not set). */
    path: string;
    /** `syncadvisor.interpreter`: a Python interpreter ("" when not set). */
    interpreter: string;
    /** `syncadvisor.jobs`: `--jobs N` (null: the server's default, the CPU count). */
    jobs: number | null;
}

export interface ServerCommand {
    command: string;
    args: string[];
    /** Which setting or fallback chose it, for the output channel and error messages. */
    source: string;
}

export interface Context {
    /** The first workspace folder, for `${workspaceFolder}` (undefined: none open). */
    workspaceFolder?: string;
    home: string;
    env: Record<string, string | undefined>;
    platform: string;
}

/**
 * A setting's value with the variables users write in VS Code settings replaced:
 * `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`. VS Code does
 * not do this for an extension's own settings; the Python and ruff extensions do it
 * themselves, so users expect it. An unknown variable is left as written.
 */
export function expand(value: string, context: Context): string {
    let text = value.trim();
    if (text === "~" || text.startsWith("~/") || text.startsWith("~\\")) {
        text = context.home + text.slice(1);
    }
    return text.replace(/\$\{([^}]+)\}/g, (whole: string, name: string) => {
        if (name === "workspaceFolder" && context.workspaceFolder !== undefined) {
            return context.workspaceFolder;
        }
        if (name === "userHome") {
            return context.home;
        }
        if (name.startsWith("env:")) {
            return context.env[name.slice(4)] ?? "";
        }
        return whole;
    });
}

/** The interpreter to use when nothing is configured and no Python extension answers:
 * `python3` on POSIX (Debian and macOS have no `python` by default), `python` on Windows
 * (where `python3` may be the Store's stub that opens the Store). */
export function defaultInterpreter(platform: string): string {
    return platform === "win32" ? "python" : "python3";
}

function jobsArgs(jobs: number | null): string[] {
    // (a fraction or a number below 1 would make the server exit with a usage error)
    return jobs !== null && Number.isInteger(jobs) && jobs >= 1 ? ["--jobs", String(jobs)] : [];
}

/**
 * The command line that starts the server, by precedence: `syncadvisor.path` (the
 * executable), `syncadvisor.interpreter` (`-m syncadvisor`), the workspace's Python
 * environment as the Python extension chose it (`pythonEnvironment`), else the default
 * interpreter from PATH.
 */
export function serverCommand(settings: Settings, pythonEnvironment: string | undefined,
                              context: Context): ServerCommand {
    const server = ["server", ...jobsArgs(settings.jobs)];
    const path = expand(settings.path, context);
    if (path !== "") {
        return { command: path, args: server, source: "syncadvisor.path" };
    }
    const interpreter = expand(settings.interpreter, context);
    if (interpreter !== "") {
        return { command: interpreter, args: ["-m", "syncadvisor", ...server],
                 source: "syncadvisor.interpreter" };
    }
    if (pythonEnvironment !== undefined && pythonEnvironment.trim() !== "") {
        return { command: pythonEnvironment, args: ["-m", "syncadvisor", ...server],
                 source: "the Python extension's environment" };
    }
    return { command: defaultInterpreter(context.platform),
             args: ["-m", "syncadvisor", ...server], source: "PATH" };
}

/** The command line as a shell would take it, for messages. */
export function commandLine(command: ServerCommand): string {
    const quote = (part: string): string => /^[\w@%+=:,./\\-]+$/.test(part) ? part
        : `"${part.replace(/(["\\$`])/g, "\\$1")}"`;
    return [command.command, ...command.args].map(quote).join(" ");
}

/** What the user reads when the server cannot start: what was run, why it was chosen,
 * and how to fix it. */
export function startFailure(command: ServerCommand, reason: string): string {
    const what = `syncadvisor: the server did not start: \`${commandLine(command)}\` ` +
        `(from ${command.source}): ${reason}.`;
    const settings = "set `syncadvisor.path` to a `syncadvisor` executable, or " +
        "`syncadvisor.interpreter` to a Python that has `syncadvisor[server]`.";
    if (command.args[0] !== "-m") {
        return `${what} Check the path, or ${settings}`;
    }
    const pip = commandLine({ ...command, args: ["-m", "pip", "install", "syncadvisor[server]"] });
    return `${what} Install it there (\`${pip}\`), or ${settings}`;
}

/** Whether a configuration change (by the section names it affects) needs a restart. */
export function needsRestart(affects: (section: string) => boolean): boolean {
    return ["syncadvisor.path", "syncadvisor.interpreter", "syncadvisor.jobs"].some(affects);
}
