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

    @Test func aMisspeltProfileFailsTheRunWithADidYouMean() async throws {
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
