// The .vsix ships dist/extension.js alone (no node_modules): loading it must need nothing
// but `vscode`, which VS Code provides, and Node's own modules. Here `vscode` is a stub
// that answers every property; only the module's loading is checked, not its behaviour.
import { strict as assert } from "node:assert";
import { isBuiltin } from "node:module";
import * as path from "node:path";
import { test } from "node:test";

type Load = (request: string, ...rest: unknown[]) => unknown;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loader = require("node:module") as { _load: Load };

test("the bundle loads with only vscode and Node's modules outside it", () => {
    const stub: object = new Proxy(function () { /* anything */ }, {
        get: (_target, name) => name === "then" ? undefined : stub,
        apply: () => stub,
        construct: () => stub,
    });
    const outside = new Set<string>();
    const load = loader._load;
    loader._load = function (this: unknown, request: string, ...rest: unknown[]) {
        if (request === "vscode") {
            outside.add(request);
            return stub;
        }
        if (!request.startsWith(".") && !path.isAbsolute(request)) {
            outside.add(request);
        }
        return load.call(this, request, ...rest);
    };
    try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const extension = require(path.resolve(__dirname, "../../dist/extension.js")) as
            Record<string, unknown>;
        assert.equal(typeof extension["activate"], "function");
        assert.equal(typeof extension["deactivate"], "function");
    } finally {
        loader._load = load;
    }
    const unexpected = [...outside].filter((name) => name !== "vscode" && !isBuiltin(name));
    assert.deepEqual(unexpected, []);
    assert.ok(outside.has("vscode"));
});
