import AuthmockScenario
import AuthmockTransports
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
        let results = await ScenarioRunner.run(cases, options: RunOptions(driver: try referenceDriver()))
        #expect(results.count == cases.count)
        for result in results where result.verdict != .pass {
            Issue.record("\(result.label) \(result.verdict.rawValue): \(result.reason ?? "")\(Reports.details(result))")
        }
    }

    func runFake(_ python: String, scenario yaml: String = simple, profile: String = "oauth2") async throws -> CaseResult {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("fake-driver-\(UUID()).py")
        try python.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let parsed = try scenario(yaml)
        return await ScenarioRunner.runCase(parsed, profile: profile, options: RunOptions(driver: "python3 \(script.path)", jobs: 1))
    }

    static let helloThen = """
        import json, sys, time
        def send(obj):
            sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
        line = sys.stdin.readline()
        send({"id": json.loads(line)["id"], "ok": True, "driver": "fake", "version": "0", "profiles": PROFILES})
        """

    @Test func aDriverThatCrashesIsAnError() async throws {
        let result = try await runFake(
            Self.helloThen.replacingOccurrences(of: "PROFILES", with: #"["oauth2"]"#)
                + "\nsys.stderr.write('boom: segfault in the library\\n')\nsys.exit(3)\n")
        #expect(result.verdict == .error)
        #expect(result.reason?.contains("exited before the scenario finished") == true, "\(result.reason ?? "")")
        #expect(result.driverStderr.contains("boom"))
    }

    @Test func aDriverThatHangsIsAnErrorWithinTheTimeout() async throws {
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("hung-child-\(UUID())")
        defer { try? FileManager.default.removeItem(at: pidFile) }
        let start = ContinuousClock.now
        // The child it spawns must die with it: the whole process group goes.
        // The child writes its pid, so the test knows it really ran.
        let child = "import subprocess\nc = subprocess.Popen(['sleep', '300'])\nopen('\(pidFile.path)', 'w').write(str(c.pid))\n"
        let result = try await runFake(Self.helloThen.replacingOccurrences(of: "PROFILES", with: #"["oauth2"]"#) + "\n" + child + "time.sleep(300)\n")
        #expect(result.verdict == .error)
        #expect(result.reason?.contains("unanswered") == true, "\(result.reason ?? "")")
        #expect(ContinuousClock.now - start < .seconds(12))
        let pid = try #require(Int32(try String(contentsOf: pidFile, encoding: .utf8)), "the hung driver's child never started")
        try await Task.sleep(for: .milliseconds(500))
        // Gone, or a zombie waiting for init to reap it (state Z in /proc): not running.
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        let state = stat.split(separator: ")").last?.split(separator: " ").first ?? "gone"
        #expect(state == "gone" || state == "Z" || state == "X", "a child of the hung driver (pid \(pid)) survived in state \(state)")
    }

    @Test func aDriverThatPrintsGarbageIsAnError() async throws {
        let result = try await runFake(
            Self.helloThen.replacingOccurrences(of: "PROFILES", with: #"["oauth2"]"#)
                + "\nsys.stdout.write('Hello from the library!\\n'); sys.stdout.flush()\ntime.sleep(5)\n")
        #expect(result.verdict == .error)
        #expect(result.reason?.contains("not JSON: Hello from the library!") == true, "\(result.reason ?? "")")
    }

    @Test func anUnsupportedDialectIsSkipped() async throws {
        let result = try await runFake(
            Self.helloThen.replacingOccurrences(of: "PROFILES", with: #"["envelope"]"#)
                + "\nfor line in sys.stdin:\n    m = json.loads(line)\n    send({'id': m['id'], 'ok': True})\n    if m['op'] == 'shutdown': break\n")
        #expect(result.verdict == .skip)
        #expect(result.reason?.contains("does not speak oauth2") == true)
    }

    /// Every dialect but oauth2 is a file, and its description reaches a
    /// driver with the `dialect` capability, built in or not: a driver that
    /// names only oauth2 runs envelope's case from it; oauth2's hello carries none.
    @Test(arguments: ["oauth2", "envelope"])
    func everyDialectButOAuth2ReachesADriverAsItsDescription(profile: String) async throws {
        let record = FileManager.default.temporaryDirectory.appendingPathComponent("hello-\(UUID()).txt")
        defer { try? FileManager.default.removeItem(at: record) }
        let driver = """
            import json, sys
            hello = json.loads(sys.stdin.readline())
            open("\(record.path)", "w").write(str((hello.get("dialect") or {}).get("refresh_on")))
            sys.stdout.write(json.dumps({"id": hello["id"], "ok": True, "driver": "fake", "version": "0", "profiles": ["oauth2"], "capabilities": ["dialect"]}) + "\\n")
            sys.stdout.flush()
            for line in sys.stdin:
                m = json.loads(line)
                sys.stdout.write(json.dumps({"id": m["id"], "ok": True, "outcome": "ok", "status": 200}) + "\\n"); sys.stdout.flush()
                if m["op"] == "shutdown": break
            """
        let result = try await runFake(
            driver, scenario: Self.simple.replacingOccurrences(of: "profile: oauth2", with: "profiles: [oauth2, envelope]"), profile: profile)
        #expect(result.verdict != .skip, "\(result.reason ?? "")")
        // envelope's file says its signal is the code (`refresh_on: code`).
        #expect(try String(contentsOf: record, encoding: .utf8) == (profile == "oauth2" ? "None" : "code"))
    }

    /// A case that signs out is SKIP for a driver without the `logout`
    /// capability, and for one that declares it but answers `unsupported`.
    @Test(arguments: [false, true])
    func aLogoutTheDriverCannotDoIsSkipped(declared: Bool) async throws {
        let yaml = Self.simple.replacingOccurrences(of: "  - request: {path: /api/items}", with: "  - logout: {}\n  - request: {path: /api/items}")
        let hello = """
            import json, sys
            def send(obj):
                sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
            for line in sys.stdin:
                m = json.loads(line)
                if m['op'] == 'hello':
                    send({'id': m['id'], 'ok': True, 'driver': 'fake', 'version': '0', 'profiles': ['oauth2'], 'capabilities': CAPS})
                elif m['op'] in ('login', 'shutdown'):
                    send({'id': m['id'], 'ok': True, 'outcome': 'ok'})
                    if m['op'] == 'shutdown': break
                else:
                    send({'id': m['id'], 'ok': False, 'outcome': 'unsupported', 'message': 'unknown op'})
            """
        let result = try await runFake(hello.replacingOccurrences(of: "CAPS", with: declared ? #"["logout"]"# : "[]"), scenario: yaml)
        #expect(result.verdict == .skip, "\(result.verdict) \(result.reason ?? "")")
        #expect(result.reason?.contains("logout") == true, "\(result.reason ?? "")")
    }

    @Test func anAnswerForAnUnknownIdIsAnError() async throws {
        let result = try await runFake(
            Self.helloThen.replacingOccurrences(of: "PROFILES", with: #"["oauth2"]"#) + "\nsend({'id': '77', 'ok': True})\ntime.sleep(5)\n")
        #expect(result.verdict == .error)
        #expect(result.reason?.contains("id 77 was never sent") == true, "\(result.reason ?? "")")
    }

    @Test func knownFailuresAreSkippedAndNewPassesAreReported() async throws {
        let yaml = Self.simple.replacingOccurrences(of: "outcomes: {ok: all}", with: "outcomes: {reauth_required: all}")
        let failing = await ScenarioRunner.runCase(
            try scenario(yaml), profile: "oauth2",
            options: RunOptions(driver: try referenceDriver(), expectedFailures: ["9.9": "the library never signs out"]))
        #expect(failing.verdict == .skip)
        #expect(failing.reason == "known failure: the library never signs out")
        let passing = await ScenarioRunner.runCase(
            try scenario(Self.simple), profile: "oauth2",
            options: RunOptions(driver: try referenceDriver(), expectedFailures: ["9.9 [oauth2]": "flaky"]))
        #expect(passing.verdict == .pass)
        #expect(passing.reason?.contains("remove it from the expected-failures file") == true)
    }

    @Test func failuresNameTheExpectationAndTheEvidence() async throws {
        let cases = try builtInCases().filter { $0.0.id == "1.1" && $0.1 == "oauth2" }
        let results = await ScenarioRunner.run(cases, options: RunOptions(driver: try referenceDriver() + " --fault refresh-per-401"))
        let result = try #require(results.first)
        #expect(result.verdict == .fail)
        let superfluous = try #require(result.failedFindings.first { $0.expectation == "superfluous_refreshes" })
        #expect(superfluous.message.hasPrefix("expected exactly 0 superfluous refreshes, saw "), "\(superfluous.message)")
        #expect(superfluous.message.contains("of this login was still in flight"), "\(superfluous.message)")
        #expect(superfluous.rule?.contains("RFC 9700") == true)
        #expect(superfluous.evidence.contains { $0.contains("[superfluous: ") })
        let reuse = try #require(result.failedFindings.first { $0.expectation == "refresh_token_reuse" })
        #expect(reuse.message.contains("reuse detection revoked the login"), "\(reuse.message)")
        #expect(!reuse.evidence.isEmpty)

        let junit = Reports.junit(results, seconds: 1)
        #expect(junit.contains(#"<failure message="expected exactly 0 superfluous refreshes"#))
        let json = Reports.json(results, seconds: 1, driver: "x")
        let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect((parsed?["summary"] as? [String: Int])?["FAIL"] == 1)
        #expect((parsed?["suite"] as? [String: Any])?["digests"] as? [String: String] != nil)
        try await expectValidReport(json)
        #expect(XMLParser(data: Data(junit.utf8)).parse(), "the JUnit report is not well-formed XML")
    }

    /// A driver that lies: answers every call without sending anything.
    static func liar(outcome: String, status: Int, capabilities: String = "[\"url\"]") -> String {
        """
        import json, sys
        for line in sys.stdin:
            m = json.loads(line)
            if m["op"] == "hello":
                a = {"id": m["id"], "ok": True, "driver": "liar", "version": "0", "profiles": ["oauth2", "envelope", "reissue", "renewal", "header-rotation"], "capabilities": \(capabilities)}
            elif m["op"] == "request":
                a = {"id": m["id"], "ok": \(outcome == "ok" ? "True" : "False"), "outcome": "\(outcome)", "status": \(status), "body": "{}"}
            else:
                a = {"id": m["id"], "ok": True}
            sys.stdout.write(json.dumps(a) + "\\n"); sys.stdout.flush()
            if m["op"] == "shutdown": break
        """
    }

    /// No verdict without evidence: a driver that sends nothing passes no
    /// case, whether it claims success or the failure a case expects. The
    /// three liars side by side: each case only waits (at most 5 s) for
    /// requests that never come. Each liar meets every case once, on a
    /// dialect that turns with the liar and the case's place, so a case of
    /// three dialects or more meets each liar on another dialect: a quarter
    /// of the runs of every liar on every dialect, whose Python starts were
    /// most of the time.
    @Test func aDriverThatSendsNothingPassesNoCase() async throws {
        let all = try builtInCases().filter { !["1.5", "6.1"].contains($0.0.id) }
        let ids = Array(Set(all.map(\.0.id))).sorted()
        @Sendable func cases(for liar: Int) -> [(Scenario, String)] {
            ids.enumerated().compactMap { place, id in
                let runs = all.filter { $0.0.id == id }
                return runs.isEmpty ? nil : runs[(liar + place) % runs.count]
            }
        }
        let liars = [("ok", 200), ("http_error", 401), ("reauth_required", 401)]
        var scripts: [URL] = []
        for (outcome, status) in liars {
            let script = FileManager.default.temporaryDirectory.appendingPathComponent("liar-\(UUID()).py")
            try Self.liar(outcome: outcome, status: status).write(to: script, atomically: true, encoding: .utf8)
            scripts.append(script)
        }
        defer { for script in scripts { try? FileManager.default.removeItem(at: script) } }
        let passed = await withTaskGroup(of: [String].self) { group in
            for (liar, ((outcome, status), script)) in zip(liars, scripts).enumerated() {
                group.addTask {
                    let cases = cases(for: liar)
                    let results = await ScenarioRunner.run(cases, options: RunOptions(driver: "python3 \(script.path)", jobs: cases.count))
                    return results.filter { $0.verdict == .pass || $0.verdict == .error }.map {
                        "\($0.label) \($0.verdict.rawValue) for a driver that sends nothing and says \(outcome) \(status): \($0.reason ?? "")"
                    }
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        for finding in passed { Issue.record("\(finding)") }
    }

    /// Once every call is answered the verdict is in: a driver that is slow
    /// to answer `shutdown` (workers to reap on a loaded machine) keeps it.
    @Test func aSlowShutdownKeepsTheVerdict() async throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("slow-shutdown-\(UUID()).py")
        try """
        import json, subprocess, sys, threading, time
        driver = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        def answers():
            for line in driver.stdout:
                sys.stdout.write(line); sys.stdout.flush()
        threading.Thread(target=answers, daemon=True).start()
        for line in sys.stdin:
            if json.loads(line)["op"] == "shutdown":
                time.sleep(5)
            driver.stdin.write(line); driver.stdin.flush()
        """.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let parsed = try scenario(Self.simple)
        let result = await ScenarioRunner.runCase(
            parsed, profile: "oauth2", options: RunOptions(driver: "python3 \(script.path) \(try referenceDriver())", jobs: 1))
        #expect(result.verdict == .pass, "\(result.reason ?? "")\(Reports.details(result))")
    }

    /// A client that never stops retrying is judged, not an ERROR: a call
    /// unanswered at the deadline while the journal is past the case's
    /// `max_requests` FAILs with that bound and the cause `unbounded`; one
    /// that hangs quietly stays an ERROR (a hang says nothing of refresh logic).
    @Test(arguments: [true, false]) func aClientThatRetriesWithoutEndFails(loops: Bool) async throws {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("endless-\(UUID()).py")
        try """
        import json, sys, urllib.request
        base = None
        for line in sys.stdin:
            m = json.loads(line)
            if m["op"] == "hello":
                base = m["baseURL"]
                a = {"id": m["id"], "ok": True, "driver": "endless", "version": "0", "profiles": ["oauth2"]}
            elif m["op"] == "login":
                a = {"id": m["id"], "ok": True, "outcome": "ok"}
            elif m["op"] == "request":
                while \(loops ? "True" : "False"):
                    try:
                        urllib.request.urlopen(base + m["path"])
                    except Exception:
                        pass
                continue
            else:
                a = {"id": m["id"], "ok": True}
            print(json.dumps(a), flush=True)
        """.write(to: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: script) }
        let parsed = try scenario(Self.simple + "\n  max_requests: 5")
        let result = await ScenarioRunner.runCase(parsed, profile: "oauth2", options: RunOptions(driver: "python3 \(script.path)", jobs: 1))
        if loops {
            #expect(result.verdict == .fail, "\(result.reason ?? "")\(Reports.details(result))")
            #expect(result.failedFindings.map(\.expectation) == ["max_requests", "wait_for"])
            #expect(result.causes?.map(\.id) == ["unbounded"])
        } else {
            #expect(result.verdict == .error && result.reason?.contains("unanswered") == true, "\(result.verdict) \(result.reason ?? "")")
        }
    }

    /// `clear_faults` ends the holds of the rules it removes: an answer held
    /// for a minute goes out when the step runs, well inside the case's
    /// timeout (how 9.1 and 9.5 hold a refresh across a sign-out or cancel).
    @Test func clearFaultsReleasesAHeldAnswer() async throws {
        let parsed = try scenario(
            """
            id: "9.9"
            name: a held answer released
            description: an answer held a minute, released by clear_faults
            profile: oauth2
            timeout: 10
            steps:
              - login: {}
              - fault: {match: {kind: resource}, action: {type: delay-response, ms: 60000}}
              - request: {path: /api/items, wait: false}
              - wait_for: {kind: resource, count: 1, answered: true}
              - clear_faults: {}
              - wait_for: all
            expect:
              outcomes: {ok: all}
            """)
        let result = await ScenarioRunner.runCase(parsed, profile: "oauth2", options: RunOptions(driver: try referenceDriver(), jobs: 1))
        #expect(result.verdict == .pass, "\(result.reason ?? "")\(Reports.details(result))")
        #expect(result.seconds < 8)
    }

    /// A driver that declares `tls` has its cases served over HTTPS: the
    /// probe's hello is plain HTTP (capabilities are not known yet), every
    /// case's hello names an `https` base URL and carries the certificate,
    /// which is also the file `AUTHMOCK_CA_FILE` names, and which verifies
    /// the case server's TLS handshake.
    @Test func aDriverThatDeclaresTLSIsServedOverHTTPS() async throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID()).jsonl")
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("tls-driver-\(UUID()).py")
        try """
        import json, os, ssl, sys, urllib.request
        hello = None
        for line in sys.stdin:
            m = json.loads(line)
            if m["op"] == "hello":
                hello = m
                a = {"id": m["id"], "ok": True, "driver": "tls", "version": "0", "profiles": ["oauth2"], "capabilities": ["tls"]}
            elif m["op"] == "login":
                seen = {"baseURL": hello["baseURL"], "pem": hello.get("caCertificate"), "file": os.environ.get("AUTHMOCK_CA_FILE")}
                if seen["file"]:
                    seen["fileText"] = open(seen["file"]).read()
                    context = ssl.create_default_context(cafile=seen["file"])
                    with urllib.request.urlopen(hello["baseURL"] + "/.well-known/oauth-authorization-server", context=context) as r:
                        seen["metadataStatus"] = r.status
                with open("\(log.path)", "a") as f:
                    f.write(json.dumps(seen) + "\\n")
                a = {"id": m["id"], "ok": True, "outcome": "ok"}
            elif m["op"] == "request":
                a = {"id": m["id"], "ok": False, "outcome": "transport_error"}
            else:
                a = {"id": m["id"], "ok": True}
            sys.stdout.write(json.dumps(a) + "\\n"); sys.stdout.flush()
            if m["op"] == "shutdown": break
        """.write(to: script, atomically: true, encoding: .utf8)
        defer {
            try? FileManager.default.removeItem(at: script)
            try? FileManager.default.removeItem(at: log)
        }
        let cases = try builtInCases().filter { $0.0.id == "5.1" && $0.1 == "oauth2" }
        #expect(cases.count == 1)
        let results = await ScenarioRunner.run(cases, options: RunOptions(driver: "python3 \(script.path)", jobs: 1))
        #expect(results.count == 1)
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 1, "one login: the case's")
        let seen = try #require(JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect((seen["baseURL"] as? String)?.hasPrefix("https://127.0.0.1:") == true, "\(seen)")
        let pem = try #require(seen["pem"] as? String)
        #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(seen["fileText"] as? String == pem, "AUTHMOCK_CA_FILE holds the certificate hello carries")
        #expect(seen["metadataStatus"] as? Int == 200, "the certificate verifies the case server")
        let file = try #require(seen["file"] as? String)
        #expect(!FileManager.default.fileExists(atPath: file), "the run removes its certificate file")
    }

    /// `hello` is asked once per run: cases of dialects the driver does not
    /// speak, or that need an extension it lacks, are SKIP without starting it.
    @Test func helloIsAskedOncePerRunAndUnsupportedCasesDoNotStartTheDriver() async throws {
        let counter = FileManager.default.temporaryDirectory.appendingPathComponent("starts-\(UUID())")
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("counted-\(UUID()).py")
        let body = Self.liar(outcome: "ok", status: 200, capabilities: "[]").replacingOccurrences(
            of: "\"envelope\", \"reissue\", \"renewal\", \"header-rotation\"", with: "")
        try ("open(\"\(counter.path)\", \"a\").write(\"start\\n\")\n" + body).write(to: script, atomically: true, encoding: .utf8)
        defer {
            try? FileManager.default.removeItem(at: script)
            try? FileManager.default.removeItem(at: counter)
        }
        let cases = try builtInCases().filter { ["1.1", "8.2"].contains($0.0.id) }
        #expect(cases.count == 6)
        let results = await ScenarioRunner.run(cases, options: RunOptions(driver: "python3 \(script.path)", jobs: 2))
        let skipped = results.filter { $0.verdict == .skip }
        #expect(skipped.count == 5, "\(results.map { "\($0.label) \($0.verdict.rawValue)" })")
        #expect(results.first { $0.id == "8.2" }?.reason?.contains("`url` capability") == true)
        let starts = try String(contentsOf: counter, encoding: .utf8).split(separator: "\n").count
        #expect(starts == 2, "the probe and 1.1 [oauth2] only; the driver was started \(starts) times")
    }

    /// The JSON report validates against the published schema, checked by an
    /// independent validator (Python's jsonschema).
    func expectValidReport(_ json: String) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("report-\(UUID()).json")
        try json.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, text) = try await runPython(
            "import json, sys, jsonschema; jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))",
            packageRoot.appendingPathComponent("docs/report.schema.json").path, file.path)
        #expect(status == 0, "the JSON report does not match docs/report.schema.json: \(text.suffix(2000))")
    }
}
