// The workspace's Python environment, as the Python extension (ms-python.python) chose
// it, through its public API: read here rather than through the @vscode/python-extension
// package, which would be one more runtime dependency for two calls.
import * as vscode from "vscode";

interface EnvironmentPath {
    readonly path: string;
}

interface ResolvedEnvironment {
    readonly executable: { readonly uri: vscode.Uri | undefined };
}

interface PythonApi {
    readonly environments: {
        getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
        resolveEnvironment(environment: EnvironmentPath): Promise<ResolvedEnvironment | undefined>;
        readonly onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
    };
}

async function api(): Promise<PythonApi | undefined> {
    const extension = vscode.extensions.getExtension<PythonApi>("ms-python.python");
    if (extension === undefined) {
        return undefined;
    }
    try {
        const exports = extension.isActive ? extension.exports : await extension.activate();
        // (an old Python extension has no `environments` API: as if it were absent)
        return exports?.environments !== undefined ? exports : undefined;
    } catch {
        return undefined;
    }
}

/** The interpreter of the environment the Python extension uses for `resource`, or
 * undefined where there is no Python extension or it has chosen none. */
export async function activeInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
    const python = await api();
    if (python === undefined) {
        return undefined;
    }
    try {
        const environment = await python.environments.resolveEnvironment(
            python.environments.getActiveEnvironmentPath(resource));
        return environment?.executable.uri?.fsPath;
    } catch {
        return undefined;
    }
}

/** Calls `listener` when the user picks another environment (a no-op without the Python
 * extension). */
export async function onEnvironmentChange(listener: () => void): Promise<vscode.Disposable> {
    const python = await api();
    return python?.environments.onDidChangeActiveEnvironmentPath(listener)
        ?? new vscode.Disposable(() => undefined);
}
