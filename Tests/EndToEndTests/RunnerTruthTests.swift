import Foundation
import Testing

/// `authmock run` tells the truth at once, through the real binary: a driver
/// that cannot start stops the run, a run that judged nothing is not green,
/// and errors name what a person needs to fix them.
struct RunnerTruthTests {
    /// A driver that answers hello with `profiles`, signs in, and answers every call `unsupported`.
    static func helloOnlyDriver(profiles: String) -> String {
        """
        import json, sys
        for line in sys.stdin:
            m = json.loads(line)
            if m["op"] == "hello":
                print(json.dumps({"id": m["id"], "ok": True, "driver": "t", "version": "1", "profiles": \(profiles)}), flush=True)
            elif m["op"] in ("shutdown", "login"):
                print(json.dumps({"id": m["id"], "ok": True}), flush=True)
                if m["op"] == "shutdown":
                    break
            else:
                print(json.dumps({"id": m["id"], "ok": False, "outcome": "unsupported"}), flush=True)
        """
    }

    static func writeDriver(_ code: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-driver-\(UUID()).py")
        try code.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test func aDriverThatCannotStartStopsTheRunWithOneError() async throws {
        let started = Date()
        let script = try Self.writeDriver("import sys\nsys.stderr.write('ModuleNotFoundError: No module named httpx\\n')\nsys.exit(1)\n")
        defer { try? FileManager.default.removeItem(at: script) }
        let result = try await runAuthmock(["run", "--driver", "python3 \(script.path)"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(Date().timeIntervalSince(started) < 15)
        #expect(result.stdout.contains("the driver failed hello, so no case ran"), "\(result.stdout)")
        // Its stderr is shown once, not once per case.
        #expect(result.stdout.components(separatedBy: "No module named httpx").count == 2, "\(result.stdout)")
        #expect(result.stdout.contains("0 passed, 1 failed, 0 skipped"), "\(result.stdout)")
    }

    @Test func aMisspeltDialectFailsTheRunWithADidYouMean() async throws {
        let script = try Self.writeDriver(Self.helloOnlyDriver(profiles: #"["oauth"]"#))
        defer { try? FileManager.default.removeItem(at: script) }
        let result = try await runAuthmock(["run", "--driver", "python3 \(script.path)"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("did you mean 'oauth2'?"), "\(result.stdout)")
    }

    /// Every case SKIPped (here: the driver answers every call unsupported) judged nothing.
    @Test func aRunInWhichEveryCaseSkippedIsNotGreenAndItsSkipsAreFolded() async throws {
        let script = try Self.writeDriver(Self.helloOnlyDriver(profiles: #"["oauth2"]"#))
        defer { try? FileManager.default.removeItem(at: script) }
        let result = try await runAuthmock(["run", "--driver", "python3 \(script.path)", "--case", "1.*", "--case", "5.1"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("nothing was judged"), "\(result.stdout)")
        // Folded: no SKIP progress line, one summary of the reasons.
        let lines = result.stdout.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("SKIP ") && $0.contains("[") }, "\(result.stdout)")
        #expect(result.stdout.contains("case runs skipped (--show-skips lists them):"), "\(result.stdout)")
        // The closing line counts what the table counts.
        let skipRow = try #require(lines.first { $0.hasPrefix("SKIP ") })
        let skipped = try #require(Int(skipRow.split(separator: " ").last ?? ""))
        #expect(result.stdout.contains("0 passed, 0 failed, \(skipped) skipped"), "\(result.stdout)")

        let listed = try await runAuthmock(["run", "--driver", "python3 \(script.path)", "--case", "5.1", "--show-skips"])
        #expect(listed.stdout.split(separator: "\n").contains { $0.hasPrefix("SKIP       5.1 [oauth2]") }, "\(listed.stdout)")
    }

    /// `authmock run --tls` serves every case over HTTPS, for any driver:
    /// the reference client, which trusts the certificate `hello` carries,
    /// passes the cases it passes over HTTP (the second host name of 8.2
    /// and the id tokens of 12.1 included).
    @Test func runWithTLSServesEveryDriverOverHTTPS() async throws {
        let result = try await runAuthmock([
            "run", "--tls", "--driver", try referenceDriver(), "--profile", "oauth2", "--case", "1.1", "--case", "8.2", "--case", "12.1",
        ])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("0 failed"), "\(result.stdout)")
    }

    /// A refresh that reaches the server after the case ended (here a second
    /// after the driver answered, longer than the quiet wait) is in the
    /// journal, marked late, and counted by no finding; the cause line is
    /// computed with it, so it does not say "never refreshes" beside it.
    @Test func aRequestAfterTheCaseEndedIsMarkedLateAndTheCauseSeesIt() async throws {
        let script = try Self.writeDriver(
            """
            import base64, json, sys, threading, time, urllib.request, urllib.error
            hello, tokens, late = {}, {}, []
            def post(form):
                auth = base64.b64encode(f"{hello['clientId']}:{hello['clientSecret']}".encode()).decode()
                req = urllib.request.Request(hello["baseURL"] + "/oauth/token", data=form.encode(), method="POST",
                    headers={"Authorization": "Basic " + auth, "Content-Type": "application/x-www-form-urlencoded"})
                try:
                    return json.loads(urllib.request.urlopen(req).read())
                except urllib.error.HTTPError:
                    return {}
            def refresh_later():
                time.sleep(1.0)
                tokens.update(post("grant_type=refresh_token&refresh_token=" + tokens["refresh_token"]))
            for line in sys.stdin:
                m = json.loads(line)
                if m["op"] == "hello":
                    hello = m
                    print(json.dumps({"id": m["id"], "ok": True, "driver": "late-refresh", "version": "1", "profiles": ["oauth2"]}), flush=True)
                elif m["op"] == "login":
                    tokens.update(post(f"grant_type=password&username={m['username']}&password={m['password']}"))
                    print(json.dumps({"id": m["id"], "ok": True}), flush=True)
                elif m["op"] == "request":
                    req = urllib.request.Request(hello["baseURL"] + m["path"], method=m["method"],
                        headers=dict(m.get("headers", {}), Authorization="Bearer " + tokens["access_token"]))
                    try:
                        status = urllib.request.urlopen(req).status
                    except urllib.error.HTTPError as e:
                        status = e.code
                    if status == 401:
                        thread = threading.Thread(target=refresh_later); thread.start(); late.append(thread)
                    ok = status < 400
                    print(json.dumps({"id": m["id"], "ok": ok, "outcome": "ok" if ok else "http_error", "status": status}), flush=True)
                elif m["op"] == "shutdown":
                    for thread in late: thread.join()
                    print(json.dumps({"id": m["id"], "ok": True}), flush=True)
                    break
                else:
                    print(json.dumps({"id": m["id"], "ok": False, "outcome": "unsupported"}), flush=True)
            """)
        defer { try? FileManager.default.removeItem(at: script) }
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-late-\(UUID()).json")
        defer { try? FileManager.default.removeItem(at: report) }
        let result = try await runAuthmock([
            "run", "--driver", "python3 \(script.path)", "--case", "5.3", "--profile", "oauth2", "--json", report.path,
        ])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any])
        let run = try #require((json["cases"] as? [[String: Any]])?.first)
        let entries = try #require(run["entries"] as? [[String: Any]])
        let refresh = try #require(entries.first { $0["kind"] as? String == "refresh" }, "\(entries)")
        #expect(refresh["late"] as? Bool == true, "\(refresh)")
        #expect((run["judgedThrough"] as? Int).map { $0 < (refresh["seq"] as? Int ?? 0) } == true, "\(run)")
        let journal = try #require(run["journal"] as? [String])
        #expect(journal.contains { $0.contains("refresh") && $0.contains("(late: after the case ended; no finding counted it)") }, "\(journal)")
        // The finding counted what the case saw; the cause is what the whole journal shows.
        let findings = try #require(run["findings"] as? [[String: Any]])
        #expect(findings.contains { ($0["message"] as? String)?.contains("saw 0") == true && $0["expectation"] as? String == "refreshes" })
        let causes = try #require(run["causes"] as? [[String: Any]]).compactMap { $0["id"] as? String }
        #expect(causes == ["no-retry-after-refresh"], "\(causes)")
    }

    @Test func aTakenPortIsNamedWithTheWayOut() async throws {
        let server = try ServingBinary([])
        let second = try await runAuthmock(["serve", "--port", String(server.port)])
        #expect(second.status == 1)
        #expect(second.stderr.contains("127.0.0.1:\(server.port) is taken"), "\(second.stderr)")
        #expect(second.stderr.contains("--port 0"), "\(second.stderr)")
    }

    @Test func ctlWithNoServerAsksWhetherOneIsRunning() async throws {
        let result = try await runAuthmock(["ctl", "clock", "--url", "http://127.0.0.1:9"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("is `authmock serve` running there?"), "\(result.stderr)")
    }

    @Test func aSubcommandsUsageErrorShowsItsOwnUsage() async throws {
        let result = try await runAuthmock(["run", "--driver", "x", "--level", "sometimes"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("Usage: authmock run"), "\(result.stderr)")
    }
}
