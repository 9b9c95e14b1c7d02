// Starts `syncadvisor server` (LSP over stdio) for Python files and the Python cells of
// Jupyter notebooks. Diagnostics, quick fixes, hover and the indexing progress all come
// from the server; vscode-languageclient shows the server's `$/progress` (work done
// progress) in the status bar by itself.
import * as os from "os";
import * as vscode from "vscode";
import {
    Executable, LanguageClient, LanguageClientOptions, TransportKind,
} from "vscode-languageclient/node";

import {
    DOCUMENTS, Settings, ServerCommand, commandLine, needsRestart, serverCommand, startFailure,
} from "./command";
import { activeInterpreter, onEnvironmentChange } from "./python";

const NAME = "syncadvisor";

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;
// Starts and stops one at a time: a burst of setting changes must not leave two servers.
let pending: Promise<void> = Promise.resolve();
// Whether the command line came from the Python extension (then a change of environment
// there restarts the server).
let followsPython = false;

function settings(): Settings {
    const config = vscode.workspace.getConfiguration(NAME);
    return {
        path: config.get<string>("path", ""),
        interpreter: config.get<string>("interpreter", ""),
        jobs: config.get<number | null>("jobs", null),
    };
}

async function command(): Promise<ServerCommand> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const given = settings();
    const python = given.path.trim() === "" && given.interpreter.trim() === ""
        ? await activeInterpreter(folder?.uri) : undefined;
    const chosen = serverCommand(given, python, {
        workspaceFolder: folder?.uri.fsPath, home: os.homedir(), env: process.env,
        platform: process.platform,
    });
    followsPython = python !== undefined && chosen.command === python;
    return chosen;
}

async function start(): Promise<void> {
    output ??= vscode.window.createOutputChannel(NAME);
    const chosen = await command();
    output.appendLine(`starting ${commandLine(chosen)} (from ${chosen.source})`);
    const executable: Executable = {
        command: chosen.command, args: chosen.args, transport: TransportKind.stdio,
        options: { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
    };
    const options: LanguageClientOptions = {
        documentSelector: DOCUMENTS,
        outputChannel: output,
    };
    const made = new LanguageClient(NAME, NAME, { run: executable, debug: executable }, options);
    try {
        await made.start();
        client = made;
    } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        output.appendLine(startFailure(chosen, reason));
        void vscode.window.showErrorMessage(startFailure(chosen, reason), "Open Settings")
            .then((picked) => picked === undefined ? undefined
                : vscode.commands.executeCommand("workbench.action.openSettings", NAME));
        await made.dispose().catch(() => undefined);
    }
}

async function stop(): Promise<void> {
    const running = client;
    client = undefined;
    if (running !== undefined) {
        await running.stop().catch(() => undefined);
    }
}

function restart(): Promise<void> {
    pending = pending.then(stop).then(start);
    return pending;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    context.subscriptions.push(
        vscode.commands.registerCommand(`${NAME}.restart`, restart),
        vscode.workspace.onDidChangeConfiguration((event) => {
            if (needsRestart((section) => event.affectsConfiguration(section))) {
                void restart();
            }
        }),
        await onEnvironmentChange(() => {
            if (followsPython) {
                void restart();
            }
        }),
    );
    pending = pending.then(start);
    await pending;
}

export async function deactivate(): Promise<void> {
    await pending.catch(() => undefined);
    await stop();
}
