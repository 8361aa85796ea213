import Foundation
import Synchronization
import TestSupport
import Testing

/// `authmock run --attach`: the runner listens, clients connect over a
/// WebSocket and serve the cases, with the verdicts of the stdio transport.
@Suite(.serialized) struct AttachTests {
    static let root = repositoryRoot

    /// `authmock run --attach` of cases 1.1 and 2.1 on `port`, one at a time; its output merged in one pipe.
    static func startAttachRun(port: Int, timeout: Int, _ extra: [String] = []) throws -> (Process, Pipe) {
        let run = Process()
        run.executableURL = try authmockBinary()
        run.arguments =
            [
                "run", "--attach", "--listen", "127.0.0.1:\(port)", "--attach-timeout", String(timeout), "--jobs", "1", "--case", "1.1", "--case",
                "2.1",
                "--profile", "oauth2",
            ] + extra
        let output = Pipe()
        run.standardOutput = output
        run.standardError = output
        try run.run()
        return (run, output)
    }

    var referenceDriver: String {
        get throws { try authmockBinary().deletingLastPathComponent().appendingPathComponent("authmock-reference-driver").path }
    }

    /// Verdict per case run ("1.1 [oauth2]" -> "PASS") from a JSON report.
    func verdicts(_ path: String) throws -> [String: String] {
        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        let cases = try #require(report["cases"] as? [[String: Any]])
        var verdicts: [String: String] = [:]
        for item in cases {
            verdicts["\(item["id"] ?? "?") [\(item["profile"] ?? "?")]"] = item["verdict"] as? String
        }
        return verdicts
    }

    @Test func theReferenceClientGetsTheSameVerdictsAttachedAsOverStdio() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("attach-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let stdio = directory.appendingPathComponent("stdio.json").path
        let attached = directory.appendingPathComponent("attach.json").path
        let overStdio = try await runAuthmock(["run", "--driver", try referenceDriver, "--json", stdio])
        #expect(overStdio.status == 0, "\(overStdio.stdout)\n\(overStdio.stderr)")
        // 32 connections: the runner's 32 jobs each take one (cases mostly wait, as over
        // stdio, where the default is 32 per core); {attach} is the printed URL.
        let overAttach = try await runAuthmock([
            "run", "--attach", "--listen", "127.0.0.1:0", "--attach-timeout", "60", "--json", attached, "--jobs", "32",
            "--launch", "\(try referenceDriver) --attach {attach} --connections 32",
        ])
        #expect(overAttach.status == 0, "\(overAttach.stdout)\n\(overAttach.stderr)")
        #expect(overAttach.stdout.contains("attach: client 1 attached"), "\(overAttach.stdout)")
        let expected = try verdicts(stdio)
        let seen = try verdicts(attached)
        #expect(expected.count > 100, "\(expected.count) case runs")
        let differing = expected.keys.sorted().filter { expected[$0] != seen[$0] }.map {
            "\($0): stdio \(expected[$0] ?? "-"), attach \(seen[$0] ?? "-")"
        }
        #expect(differing.isEmpty, "\(differing.joined(separator: "\n"))")
    }

    @Test func aClientThatDisconnectsMidCaseIsAnErrorAndTheNextCaseRunsAfterItReconnects() async throws {
        let client = Self.root.appendingPathComponent("Tests/EndToEndTests/Fixtures/flaky-attach-client.py").path
        let result = try await runAuthmock([
            "run", "--attach", "--attach-timeout", "30", "--jobs", "1", "--case", "1.1", "--case", "2.1", "--profile", "oauth2",
            "--launch", "python3 \(client) {attach}",
        ])
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let first = try #require(lines.firstIndex { $0.hasPrefix("ERROR ") })
        #expect(lines[first + 1].contains("the attached client disconnected"), "\(result.stdout)")
        // The second case ran on the reconnected client, which declines every call.
        #expect(lines.contains { $0.hasPrefix("SKIP ") }, "\(result.stdout)")
        #expect(result.stdout.contains("attach: client 2 attached"), "\(result.stdout)")
    }

    /// Messages over a 16 KiB frame are read, not a dropped connection; and a
    /// TCP connection that never speaks does not keep the run from ending.
    @Test func bigFramesAreReadAndAStalledConnectionDoesNotHoldTheRun() throws {
        let client = Self.root.appendingPathComponent("Tests/EndToEndTests/Fixtures/big-frame-attach-client.py").path
        let port = try freePort()
        let (run, output) = try Self.startAttachRun(port: port, timeout: 30, ["--launch", "python3 \(client) {attach}"])
        var stalled: RawConnection?
        for _ in 0..<100 where stalled == nil {
            stalled = try? RawConnection(port: port)
            if stalled == nil { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(stalled != nil, "the attach listener came up")
        let started = Date()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        run.waitUntilExit()
        #expect(Date().timeIntervalSince(started) < 20, "the run ended although a connection stalled: \(text)")
        // Not dropped while the cases ran (after the last one the client may leave before the run says it is over).
        let whileRunning = text.components(separatedBy: "2.1 [oauth2]").first ?? text
        #expect(!whileRunning.contains("disconnected"), "\(text)")
        #expect(text.contains("2 case runs"), "the client's big answers were read: \(text.prefix(2_000))")
        #expect(text.contains("more characters)"), "a 40,000-character driver message is shortened in the report")
        #expect(text.count < 20_000, "\(text.count) characters of output")
        _ = stalled
    }

    /// The attach transport fuzzed (issue 35): a client answers the runner's
    /// hello with hostile frames of every size and shape, one connection
    /// each. Each is refused by closing the connection (4000: reconnect,
    /// 1002: protocol error, 1009: over the 4 MiB limit), the runner neither
    /// crashes nor gives up, and the client that then attaches properly gets
    /// every case run.
    @Test func hostileFramesOfEverySizeAreRefusedAndTheRunGoesOn() async throws {
        let fixture = Self.root.appendingPathComponent("Tests/EndToEndTests/Fixtures/frame-fuzz-attach-client.py").path
        let port = try freePort()
        let (run, output) = try Self.startAttachRun(port: port, timeout: 60)
        for _ in 0..<100 where (try? RawConnection(port: port)) == nil { try await Task.sleep(for: .milliseconds(100)) }
        let started = Date()
        let client = try await runProcess("python3", [fixture, "ws://127.0.0.1:\(port)/attach", "7"])
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        run.waitUntilExit()
        #expect(Date().timeIntervalSince(started) < 60, "\(text.suffix(1_000))")
        #expect(
            run.terminationReason == .exit && run.terminationStatus == 1,
            "every case fails at its sign-in (the client declines): \(text.suffix(1_000))")
        #expect(text.contains("2 case runs") && text.contains("failed = FAIL 2 + ERROR 0"), "\(text.suffix(2_000))")
        let frames = client.stderr.split(separator: "\n").filter { $0.hasPrefix("frame ") }
        #expect(frames.count == 23, "\(client.stderr)")
        for line in frames where !line.hasPrefix("frame cut-short:") {
            #expect(
                line.hasSuffix("close 4000") || line.hasSuffix("close 1002") || line.hasSuffix("close 1009") || line.hasSuffix("close 1000"),
                "\(line)")
        }
        // A frame cut short waits for its rest: the connection stays until the client goes.
        #expect(frames.contains("frame cut-short: open"))
        #expect(client.stderr.contains("attached properly: 1000"), "the run ended by telling the client so: \(client.stderr)")
    }

    @Test func withNoClientEveryCaseIsAnErrorThatSaysWhereToAttach() async throws {
        let started = Date()
        let result = try await runAuthmock(["run", "--attach", "--attach-timeout", "1", "--case", "1.1", "--case", "2.1", "--profile", "oauth2"])
        #expect(result.status == 1)
        #expect(result.stdout.contains("ERROR "), "\(result.stdout)")
        #expect(result.stdout.contains("no client attached to ws://127.0.0.1:"), "\(result.stdout)")
        #expect(result.stdout.contains("--public-url"), "\(result.stdout)")
        // The second case does not wait again for a client that never came.
        #expect(Date().timeIntervalSince(started) < 20)
    }

    @Test func listenAndPublicURLAreChecked() async throws {
        let listen = try await runAuthmock(["run", "--attach", "--listen", "localhost"])
        #expect(listen.status == 2)
        #expect(listen.stderr.contains("--listen takes HOST:PORT"), "\(listen.stderr)")
        let publicURL = try await runAuthmock(["run", "--attach", "--public-url", "http://10.0.2.2:8080"])
        #expect(publicURL.status == 2)
        #expect(publicURL.stderr.contains("--public-url takes only a scheme and host"), "\(publicURL.stderr)")
        let both = try await runAuthmock(["run", "--attach", "--driver", "true"])
        #expect(both.status == 2, "\(both.stderr)")
    }

    /// The browser recipes in drivers/browser/, in headless Chromium (Debian's
    /// `chromium`; axios from Debian's `node-axios`), with their expected
    /// failures: both at once, a browser and a runner each, each page
    /// serving four cases at once (`?connections=4`: 91 s -> 48 s a recipe).
    @Test func browserRecipesMatchTheirExpectedFailures() async throws {
        let chromium = "/usr/bin/chromium"
        try #require(FileManager.default.isExecutableFile(atPath: chromium), "scripts/test.sh installs chromium")
        let axios = "/usr/share/nodejs/axios/dist"
        try #require(FileManager.default.fileExists(atPath: "\(axios)/axios.min.js"), "scripts/test.sh installs node-axios")
        let recipes = ["fetch", "axios"]
        typealias Run = Result<(status: Int32, stdout: String, stderr: String), any Error>
        // Both recipes at once, awaited (a blocking wait would hold a thread Swift concurrency needs).
        var runs: [String: Run] = [:]
        await withTaskGroup(of: (String, Run).self) { group in
            for recipe in recipes {
                group.addTask {
                    do {
                        return (
                            recipe,
                            .success(
                                try await runAuthmock([
                                    "run", "--attach", "--attach-timeout", "60", "--profile", "oauth2", "--assets", axios,
                                    "--expected-failures",
                                    Self.root.appendingPathComponent("drivers/browser/expected-failures-\(recipe).yaml").path,
                                    "--launch",
                                    "\(chromium) --headless=new --no-sandbox --disable-gpu --user-data-dir=$(mktemp -d) {page}\(recipe).html?connections=4",
                                ]))
                        )
                    } catch { return (recipe, .failure(error)) }
                }
            }
            for await (recipe, run) in group { runs[recipe] = run }
        }
        for recipe in recipes {
            let result = try #require(try runs[recipe]?.get())
            #expect(result.status == 0, "\(recipe): \(result.stdout)\n\(result.stderr)")
            #expect(result.stdout.contains(" 0 failed"), "\(recipe): \(result.stdout)")
            #expect(result.stdout.contains("HeadlessChrome"), "\(recipe): \(result.stdout)")
        }
    }
}
