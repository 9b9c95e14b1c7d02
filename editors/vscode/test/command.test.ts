// The extension's own logic, in plain Node (node:test): which command line starts the
// server for which settings. VS Code itself is not needed, nor downloaded.
import { strict as assert } from "node:assert";
import { test } from "node:test";

import {
    Context, DOCUMENTS, Settings, commandLine, defaultInterpreter, expand, needsRestart, serverCommand,
    startFailure,
} from "../src/command";

const NONE: Settings = { path: "", interpreter: "", jobs: null };
const POSIX: Context = {
    workspaceFolder: "/home/me/proj", home: "/home/me", env: { VENV: "/opt/venv" },
    platform: "linux",
};

test("nothing set, no Python extension: python3 -m syncadvisor from PATH", () => {
    assert.deepEqual(serverCommand(NONE, undefined, POSIX), {
        command: "python3", args: ["-m", "syncadvisor", "server"], source: "PATH",
    });
});

test("on Windows the default interpreter is python, not the Store's python3 stub", () => {
    assert.equal(defaultInterpreter("win32"), "python");
    assert.equal(serverCommand(NONE, undefined, { ...POSIX, platform: "win32" }).command,
                 "python");
    assert.equal(defaultInterpreter("darwin"), "python3");
});

test("nothing set: the Python extension's environment", () => {
    const chosen = serverCommand(NONE, "/home/me/proj/.venv/bin/python", POSIX);
    assert.deepEqual(chosen, {
        command: "/home/me/proj/.venv/bin/python", args: ["-m", "syncadvisor", "server"],
        source: "the Python extension's environment",
    });
    assert.equal(serverCommand(NONE, "  ", POSIX).source, "PATH");
});

test("syncadvisor.interpreter wins over the Python extension's environment", () => {
    const chosen = serverCommand({ ...NONE, interpreter: "${workspaceFolder}/.venv/bin/python" },
                                 "/usr/bin/python3", POSIX);
    assert.deepEqual(chosen, {
        command: "/home/me/proj/.venv/bin/python", args: ["-m", "syncadvisor", "server"],
        source: "syncadvisor.interpreter",
    });
});

test("syncadvisor.path wins over everything and runs the executable itself", () => {
    const chosen = serverCommand({ path: "~/bin/syncadvisor", interpreter: "/usr/bin/python3",
                                   jobs: 2 }, "/usr/bin/python3", POSIX);
    assert.deepEqual(chosen, {
        command: "/home/me/bin/syncadvisor", args: ["server", "--jobs", "2"],
        source: "syncadvisor.path",
    });
});

test("jobs: a positive integer becomes --jobs, anything else the server's default", () => {
    for (const jobs of [0, -1, 1.5, null]) {
        assert.deepEqual(serverCommand({ ...NONE, jobs }, undefined, POSIX).args,
                         ["-m", "syncadvisor", "server"], String(jobs));
    }
    assert.deepEqual(serverCommand({ ...NONE, jobs: 4 }, undefined, POSIX).args,
                     ["-m", "syncadvisor", "server", "--jobs", "4"]);
});

test("variables in settings are expanded as VS Code users write them", () => {
    assert.equal(expand("  ${userHome}/x  ", POSIX), "/home/me/x");
    assert.equal(expand("${env:VENV}/bin/python", POSIX), "/opt/venv/bin/python");
    assert.equal(expand("${env:MISSING}python", POSIX), "python");
    assert.equal(expand("~", POSIX), "/home/me");
    assert.equal(expand("a~/b", POSIX), "a~/b");
    assert.equal(expand("${unknown}/x", POSIX), "${unknown}/x");
    // No folder open: `${workspaceFolder}` stays, and the start fails naming it.
    assert.equal(expand("${workspaceFolder}/py", { ...POSIX, workspaceFolder: undefined }),
                 "${workspaceFolder}/py");
});

test("a failed start says what ran, where it came from, and how to fix it", () => {
    const chosen = serverCommand(NONE, undefined, POSIX);
    assert.equal(commandLine(chosen), "python3 -m syncadvisor server");
    const message = startFailure(chosen, "No module named syncadvisor");
    assert.match(message, /`python3 -m syncadvisor server` \(from PATH\): No module named/);
    assert.match(message, /`python3 -m pip install "syncadvisor\[server\]"`/);
    const path = startFailure(serverCommand({ ...NONE, path: "/my tools/syncadvisor" },
                                            undefined, POSIX), "ENOENT");
    assert.match(path, /`"\/my tools\/syncadvisor" server` \(from syncadvisor.path\): ENOENT/);
    assert.doesNotMatch(path, /pip install/);
});

test("a change of path, interpreter or jobs restarts the server; trace does not", () => {
    const changed = (names: string[]) => (section: string) => names.includes(section);
    assert.ok(needsRestart(changed(["syncadvisor.path"])));
    assert.ok(needsRestart(changed(["syncadvisor.interpreter"])));
    assert.ok(needsRestart(changed(["syncadvisor.jobs"])));
    assert.ok(!needsRestart(changed(["syncadvisor.trace.server"])));
    assert.ok(!needsRestart(changed(["python.defaultInterpreterPath"])));
});

test("the server gets Python files, unsaved Python buffers and notebooks' Python cells", () => {
    assert.deepEqual(DOCUMENTS, [
        { scheme: "file", language: "python" },
        { scheme: "untitled", language: "python" },
        { notebook: { notebookType: "jupyter-notebook" }, language: "python" },
    ]);
});
