import TestSupport
import Foundation
import Testing

/// The Python driver in docs/writing-a-driver.md, run as written against
/// part of the built-in suite through the real `authmock` binary, from an
/// empty directory (the suite travels inside the binary).
struct WritingADriverTests {
    @Test func thePythonExampleDriverWorks() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/writing-a-driver.md"), encoding: .utf8)
        let block = try #require(page.firstMatch(of: /<!-- python-driver:begin -->\n```python\n([\s\S]*?)```\n<!-- python-driver:end -->/))
        let code = String(block.1)
        #expect(code.split(separator: "\n").count < 60, "the example must stay under 60 lines")
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-empty-\(UUID())")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        try code.write(to: empty.appendingPathComponent("my_driver.py"), atomically: true, encoding: .utf8)
        let result = try await runAuthmock(
            [
                "run", "--driver", "python3 my_driver.py", "--json", "report.json",
                "--profile", "oauth2", "--case", "1.1", "--case", "1.2", "--case", "2.1", "--case", "3.1", "--case", "5.1", "--case", "7.1", "--case",
                "8.2",
            ], directory: empty)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty.path).sorted() == ["my_driver.py", "report.json"])
        // Every report names the suite it ran.
        #expect(result.stdout.contains("7 case runs from the built-in suite 0."), "\(result.stdout)")
        #expect(result.stdout.contains(/suite: built-in \d+\.\d+\.\d+\+[0-9a-f]{12}/), "\(result.stdout)")
        let report = try String(contentsOf: empty.appendingPathComponent("report.json"), encoding: .utf8)
        #expect(report.contains(/"builtIn" : "\d+\.\d+\.\d+\+[0-9a-f]{12}"/), "\(report.prefix(400))")
        #expect(report.contains("built-in/1.1-concurrent-401.yaml"))
        #expect(result.stdout.contains("6 passed, 0 failed, 1 skipped"), "\(result.stdout)")
        // Written exactly to the protocol's version 1, without the `url` extension:
        // the case about another host is SKIP with the reason, never an ERROR.
        #expect(result.stdout.contains("1 case run skipped (--show-skips lists them):"), "\(result.stdout)")
        #expect(result.stdout.contains("`url` capability"), "\(result.stdout)")
    }
}

/// `authmock init`: what it writes validates, and its driver runs.
struct InitTests {
    @Test func scaffoldValidatesAndItsDriverRuns() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-init-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = try await runAuthmock(["init", "--dir", dir.path])
        #expect(made.status == 0, "\(made.stderr)")
        let again = try await runAuthmock(["init", "--dir", dir.path])
        #expect(again.status != 0 && again.stderr.contains("use --force"), "init must not overwrite silently")

        let validate = try await runAuthmock(["validate", dir.appendingPathComponent("scenarios").path])
        #expect(validate.status == 0, "\(validate.stdout)")
        let scenario = try String(contentsOf: dir.appendingPathComponent("scenarios/my-first-case.yaml"), encoding: .utf8)
        #expect(scenario.hasPrefix("# yaml-language-server: $schema=../scenario.schema.json"))
        #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("scenario.schema.json").path))

        // The scaffolded driver is the documented one, and it runs against the suite.
        let driver = try String(contentsOf: dir.appendingPathComponent("driver/driver.py"), encoding: .utf8)
        let page = try String(contentsOf: root.appendingPathComponent("docs/writing-a-driver.md"), encoding: .utf8)
        #expect(page.contains("```python\n" + driver + "```"), "init's Python driver and the documented one differ")
        let swift = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-init-swift-\(UUID())")
        defer { try? FileManager.default.removeItem(at: swift) }
        #expect(try await runAuthmock(["init", "--dir", swift.path, "--language", "swift"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: swift.appendingPathComponent("driver/Sources/my-authmock-driver/main.swift").path))
        // The DriverKit dependency's path is relative to the driver's package and leads to this checkout.
        let manifest = try String(contentsOf: swift.appendingPathComponent("driver/Package.swift"), encoding: .utf8)
        let path = try #require(manifest.firstMatch(of: /\.package\(path: "([^"]+)"\)/)?.1)
        let resolved = URL(fileURLWithPath: String(path), relativeTo: swift.appendingPathComponent("driver", isDirectory: true))
        #expect(resolved.standardizedFileURL.resolvingSymlinksInPath().path == root.standardizedFileURL.resolvingSymlinksInPath().path, "\(path)")
    }

    /// Every command `init` prints works as printed in an empty directory (no
    /// checkout), and the template driver gets exactly what its
    /// expected-failures file says over the whole built-in suite.
    @Test func initsNextStepsWorkInAnEmptyDirectoryAndTheTemplateMeetsItsExpectations() async throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-first-hour-\(UUID())")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let made = try await runAuthmock(["init"], directory: empty)
        #expect(made.status == 0, "\(made.stderr)")
        let next = made.stdout.components(separatedBy: "Next:\n").last?.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        #expect(next.count == 2, "\(made.stdout)")
        let binary = try authmockBinary().path
        for command in next {
            #expect(command.hasPrefix("authmock "), "\(command)")
            let jobs = command.hasPrefix("authmock run") ? " --jobs 8" : ""
            let run = try await runProcess("/bin/sh", ["-c", binary + command.dropFirst("authmock".count) + jobs], directory: empty)
            #expect(run.status == 0, "\(command)\n\(run.stdout)\(run.stderr)")
            if command.hasPrefix("authmock run") {
                #expect(run.stdout.contains(" 0 failed"), "\(run.stdout)")
                #expect(!run.stdout.contains("but passed"), "a listed failure passed: \(run.stdout)")
                // Its four `should` findings, as listed, and nothing else.
                #expect(run.stdout.components(separatedBy: "known failure:").count - 1 == 4, "\(run.stdout)")
            }
        }
    }
}

/// `authmock cases` and `authmock validate` read the suite compiled into the binary.
struct BuiltInSuiteBinaryTests {
    @Test func casesListsTheBuiltInSuiteFromAnyDirectory() async throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-cases-\(UUID())")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let cases = try await runAuthmock(["cases"], directory: empty)
        #expect(cases.status == 0, "\(cases.stderr)")
        let lines = cases.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("id") == true && lines.first?.contains("level") == true)
        #expect(
            lines.contains {
                $0.hasPrefix("1.1 ") && $0.contains("must") && $0.contains("oauth2,envelope") && $0.contains("concurrent 401s refresh once")
            }, "\(cases.stdout)")
        #expect(cases.stdout.contains(/\d+ cases, \d+ case runs; built-in suite \d+\.\d+\.\d+\+[0-9a-f]{12}/), "\(cases.stdout)")
        let validate = try await runAuthmock(["validate"], directory: empty)
        #expect(validate.status == 0 && validate.stdout.contains("0 invalid (the built-in suite"), "\(validate.stdout)")
        // A path that does not exist is still a usage error, with where.
        let missing = try await runAuthmock(["cases", "nope/"], directory: empty)
        #expect(missing.status == 2 && missing.stderr.contains("nope/:1:1: no such file or directory"), "\(missing.stderr)")
    }
}

/// The Python helper (drivers/python-common/authmock_driver.py) carries the
/// `cancel` extension: a client with `cancel(call)` gets the call's
/// X-Authmock-Call while the call is still running, the `cancel` is answered
/// at once, and the call answers `cancelled`; a driver that does not declare
/// `cancel` answers it `unsupported`.
struct PythonHelperCancelTests {
    static let client = """
        import threading
        class Client:
            def __init__(self):
                self.stopped = {}
            def request(self, method, path, headers, body):
                event = self.stopped.setdefault(headers["X-Authmock-Call"], threading.Event())
                if event.wait(timeout=2):
                    return {"outcome": "cancelled"}
                return {"outcome": "ok", "status": 200, "body": ""}
            def cancel(self, call):
                self.stopped.setdefault(call, threading.Event()).set()
        """

    @Test(arguments: [true, false]) func aCancelReachesTheClientAndTheCallAnswersCancelled(declared: Bool) async throws {
        let run = try await runHelperDriver(
            Self.client, declaring: declared ? "cancel" : nil,
            [
                #"{"id":"1","op":"request","method":"GET","path":"/api/a","headers":{"X-Authmock-Call":"c1"}}"#,
                #"{"id":"2","op":"cancel","call":"1"}"#, #"{"id":"3","op":"shutdown"}"#,
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let answers = run.answers
        let byID = Dictionary(answers.map { ($0["id"] as? String ?? "", $0) }) { first, _ in first }
        let ids = answers.compactMap { $0["id"] as? String }
        if declared {
            #expect(byID["2"]?["ok"] as? Bool == true)
            #expect(byID["1"]?["outcome"] as? String == "cancelled", "\(run.stdout)")
            // The cancel was answered while the call still ran, before its answer.
            #expect(ids.firstIndex(of: "2") ?? 9 < ids.firstIndex(of: "1") ?? 0, "\(ids)")
        } else {
            #expect(byID["2"]?["outcome"] as? String == "unsupported", "\(run.stdout)")
            // Not cancelled: the call ran out its wait and ended ok.
            #expect(byID["1"]?["outcome"] as? String == "ok", "\(run.stdout)")
        }
    }
}

/// The Python helper's `instances`: a driver that declares it gets each
/// request's instance (1 when the message names none); one that does not
/// gets the call as before, with no `instance` argument its client may not take.
struct PythonHelperInstancesTests {
    static let client = """
        class Client:
            def request(self, method, path, headers, body, instance=None):
                return {"outcome": "ok", "status": 200, "body": "instance %s" % instance}
        """

    @Test(arguments: [true, false]) func eachRequestReachesItsInstance(declared: Bool) async throws {
        let run = try await runHelperDriver(
            Self.client, declaring: declared ? "instances" : nil,
            [
                #"{"id":"1","op":"request","method":"GET","path":"/api/a","headers":{"X-Authmock-Call":"c1"}}"#,
                #"{"id":"2","op":"request","method":"GET","path":"/api/b","headers":{"X-Authmock-Call":"c2"},"instance":2}"#,
                #"{"id":"3","op":"shutdown"}"#,
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let answers = run.answers
        let bodies = Dictionary(answers.map { ($0["id"] as? String ?? "", $0["body"] as? String ?? "") }) { first, _ in first }
        #expect(bodies["1"] == (declared ? "instance 1" : "instance None"), "\(run.stdout)")
        #expect(bodies["2"] == (declared ? "instance 2" : "instance None"), "\(run.stdout)")
    }
}

/// The Python helper's `logout`: a driver that declares it and whose client
/// has `logout()` gets the operation (answered with what `logout` returned);
/// one that does not declare it answers `unsupported`, so the case is SKIP.
struct PythonHelperLogoutTests {
    static let client = """
        import sys
        class Client:
            def logout(self):
                print("signed out", file=sys.stderr)
                return {"outcome": "ok"}
        """

    @Test(arguments: [true, false]) func aLogoutReachesTheClient(declared: Bool) async throws {
        let run = try await runHelperDriver(
            Self.client, declaring: declared ? "logout" : nil, [#"{"id":"1","op":"logout"}"#, #"{"id":"2","op":"shutdown"}"#])
        #expect(run.status == 0, "\(run.stderr)")
        let logout = run.answers.first { $0["id"] as? String == "1" }
        #expect(logout?["outcome"] as? String == (declared ? "ok" : "unsupported"), "\(run.stdout)")
        #expect(logout?["ok"] as? Bool == declared, "\(run.stdout)")
        #expect(run.stderr.contains("signed out") == declared, "\(run.stderr)")
    }
}

/// A driver written on the Python helper around `client` (a Python class
/// `Client`), declaring `url` and `capability`, fed `lines` after the
/// shared hello: its exit, stderr, and answers in order.
func runHelperDriver(
    _ client: String, declaring capability: String?, _ lines: [String]
) async throws -> (
    status: Int32, stderr: String, stdout: String, answers: [[String: Any]]
) {
    let capabilities = ["url", capability].compactMap { $0.map { "\"\($0)\"" } }.joined(separator: ", ")
    let script = """
        import sys
        sys.path.insert(0, sys.argv[1])
        import authmock_driver
        \(client)
        authmock_driver.serve("helper-test", "1", ["oauth2"], lambda hello: Client(), capabilities=(\(capabilities),))
        """
    let helper = repositoryRoot.appendingPathComponent("drivers/python-common").path
    let hello = #"{"id":"0","op":"hello","protocol":1,"baseURL":"http://127.0.0.1:1","profile":"oauth2","clientId":"demo","clientSecret":""}"#
    let run = try await runProcess(
        "python3", ["-c", script, helper], stdin: ([hello] + lines).joined(separator: "\n") + "\n", mergeOutput: false)
    let answers = run.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    return (run.status, run.stderr, run.stdout, answers)
}
