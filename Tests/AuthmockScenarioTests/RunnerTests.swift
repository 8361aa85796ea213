import AuthmockScenario
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

/// The runner against the reference driver and against drivers that misbehave.
@Suite(.serialized) struct RunnerTests {
    static let simple = """
        id: "9.9"
        name: one call
        description: a login and one call
        profile: oauth2
        timeout: 3
        steps:
          - login: {}
          - request: {path: /api/items}
        expect:
          outcomes: {ok: all}
        """

    /// The acceptance test of the suite: a correct client passes every case.
    @Test func referenceDriverPassesTheWholeSuite() async throws {
        let cases = try builtInCases()
        let results = await ScenarioRunner.run(cases, options: RunOptions(driver: try referenceDriver(), jobs: 8))
        #expect(results.count == cases.count)
        for result in results where result.verdict != .pass {
            Issue.record("\(result.label) \(result.verdict.rawValue): \(result.reason ?? "")\(Reports.details(result))")
        }
    }

    func runFake(_ python: String, scenario yaml: String = simple) async throws -> CaseResult {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("fake-driver-\(UUID()).py")
        try python.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let parsed = try scenario(yaml)
        return await ScenarioRunner.runCase(parsed, profile: "oauth2", options: RunOptions(driver: "python3 \(script.path)", jobs: 1))
    }

    static let helloThen = """
        import json, sys, time
        def send(obj):
            sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
        line = sys.stdin.readline()
        send({"id": json.loads(line)["id"], "ok": True, "driver": "fake", "version": "0", "profiles": PROFILES})
        """

    @Test func aDriverThatCrashesIsAnError() async throws {
        let result = try await runFake(Self.helloThen.replacingOccurrences(of: "PROFILES", with: #"["oauth2"]"#) + "\nsys.stderr.write('boom: segfault in the library\\n')\nsys.exit(3)\n")
        #expect(result.verdict == .error)
        #expect(result.reason?.contains("exited before the scenario finished") == true, "\(result.reason ?? "")")
        #expect(result.driverStderr.contains("boom"))
    }

    @Test func aDriverThatHangsIsAnErrorWithinTheTimeout() async throws {
        let marker = "hang-\(UUID().uuidString.prefix(8))"
        let start = ContinuousClock.now
        // The child it spawns must die with it: the whole process group goes.
        let result = try await runFake(Self.helloThen.replacingOccurrences(of: "PROFILES", with: #"["oauth2"]"#)
            + "\nimport subprocess\nsubprocess.Popen(['sleep', '300', '\(marker)'][0:2] + [])\nsubprocess.Popen(['sh', '-c', 'sleep 300 # \(marker)'])\ntime.sleep(300)\n")
        #expect(result.verdict == .error)
        #expect(result.reason?.contains("unanswered") == true, "\(result.reason ?? "")")
        #expect(ContinuousClock.now - start < .seconds(12))
        try await Task.sleep(for: .milliseconds(500))
        let leftovers = try Process.run(URL(fileURLWithPath: "/usr/bin/pgrep"), arguments: ["-f", marker])
        leftovers.waitUntilExit()
        #expect(leftovers.terminationStatus != 0, "a child of the hung driver survived")
    }

    @Test func aDriverThatPrintsGarbageIsAnError() async throws {
        let result = try await runFake(Self.helloThen.replacingOccurrences(of: "PROFILES", with: #"["oauth2"]"#) + "\nsys.stdout.write('Hello from the library!\\n'); sys.stdout.flush()\ntime.sleep(5)\n")
        #expect(result.verdict == .error)
        #expect(result.reason?.contains("not JSON: Hello from the library!") == true, "\(result.reason ?? "")")
    }

    @Test func anUnsupportedProfileIsSkipped() async throws {
        let result = try await runFake(Self.helloThen.replacingOccurrences(of: "PROFILES", with: #"["envelope"]"#) + "\nfor line in sys.stdin:\n    m = json.loads(line)\n    send({'id': m['id'], 'ok': True})\n    if m['op'] == 'shutdown': break\n")
        #expect(result.verdict == .skip)
        #expect(result.reason?.contains("does not speak oauth2") == true)
    }

    @Test func anAnswerForAnUnknownIdIsAnError() async throws {
        let result = try await runFake(Self.helloThen.replacingOccurrences(of: "PROFILES", with: #"["oauth2"]"#) + "\nsend({'id': '77', 'ok': True})\ntime.sleep(5)\n")
        #expect(result.verdict == .error)
        #expect(result.reason?.contains("id 77 was never sent") == true, "\(result.reason ?? "")")
    }

    @Test func knownFailuresAreSkippedAndNewPassesAreReported() async throws {
        let yaml = Self.simple.replacingOccurrences(of: "outcomes: {ok: all}", with: "outcomes: {reauth_required: all}")
        let failing = await ScenarioRunner.runCase(try scenario(yaml), profile: "oauth2", options: RunOptions(driver: try referenceDriver(), expectedFailures: ["9.9": "the library never signs out"]))
        #expect(failing.verdict == .skip)
        #expect(failing.reason == "known failure: the library never signs out")
        let passing = await ScenarioRunner.runCase(try scenario(Self.simple), profile: "oauth2", options: RunOptions(driver: try referenceDriver(), expectedFailures: ["9.9 [oauth2]": "flaky"]))
        #expect(passing.verdict == .pass)
        #expect(passing.reason?.contains("remove it from the expected-failures file") == true)
    }

    @Test func failuresNameTheExpectationAndTheEvidence() async throws {
        let cases = try builtInCases().filter { $0.0.id == "1.1" && $0.1 == "oauth2" }
        let results = await ScenarioRunner.run(cases, options: RunOptions(driver: try referenceDriver() + " --fault refresh-per-401"))
        let result = try #require(results.first)
        #expect(result.verdict == .fail)
        let refreshes = try #require(result.failedFindings.first { $0.expectation == "refreshes" })
        #expect(refreshes.message.hasPrefix("expected exactly 1 refresh request, saw "), "\(refreshes.message)")
        #expect(refreshes.message.contains("journal #"))
        #expect(refreshes.message.contains("reuse detection revoked the login"), "\(refreshes.message)")
        #expect(!refreshes.evidence.isEmpty)

        let junit = Reports.junit(results, seconds: 1)
        #expect(junit.contains(#"<failure message="expected exactly 1 refresh request"#))
        let parsed = try JSONSerialization.jsonObject(with: Data(Reports.json(results, seconds: 1, driver: "x").utf8)) as? [String: Any]
        #expect((parsed?["summary"] as? [String: Int])?["FAIL"] == 1)
        #expect(XMLParser(data: Data(junit.utf8)).parse(), "the JUnit report is not well-formed XML")
    }
}
