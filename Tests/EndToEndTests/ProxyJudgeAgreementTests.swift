import Foundation
import Testing

/// Issue 58's measure of the judge: a client with a known refresh bug, run
/// unchanged through `authmock proxy --judge` in front of a real SimpleJWT
/// server, gets the cause `authmock run` names for it on the same dialect;
/// the same client without the bug gets no FAIL. The client is authmock's
/// reference driver (its `--fault refresh-per-401` switch: every 401
/// refreshes by itself, no single flight), spoken to over the driver
/// protocol by this test as an app's code would call it: sign in, then ten
/// calls at once after the proxy's clock has expired the token.
@Suite(.serialized) struct ProxyJudgeAgreementTests {
    /// A driver process, a JSON line at a time.
    final class DriverConversation: @unchecked Sendable {
        let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        private var pending = Data()

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: try referenceDriver())
            process.arguments = arguments
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        func send(_ message: [String: Any]) throws {
            input.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: message) + Data("\n".utf8))
        }

        func answer() throws -> [String: Any] {
            while !pending.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { throw BinaryError("the driver ended") }
                pending += chunk
            }
            let end = pending.firstIndex(of: UInt8(ascii: "\n"))!
            let line = pending[..<end]
            pending = Data(pending[(end + 1)...])
            return (try JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] ?? [:]
        }

        func close() {
            try? send(["id": "end", "op": "shutdown"])
            _ = try? answer()
            process.waitUntilExit()
        }
    }

    /// The verdicts the proxy gives the reference driver (with `faults`) on
    /// sign-in and ten calls at once with an expired token.
    static func judged(faults: [String]) async throws -> [String: Any] {
        let (real, proxy) = try ProxyTests.startBoth(["--judge"])
        defer {
            _ = proxy.interrupt()
            real.stop()
        }
        let description = try await runAuthmock([
            "dialects", "--builtin", "--json", repositoryRoot.appendingPathComponent("dialects/simplejwt.yaml").path,
        ])
        let dialect = try #require(try JSONSerialization.jsonObject(with: Data(description.stdout.utf8)) as? [String: Any])
        let driver = try DriverConversation(faults.flatMap { ["--fault", $0] })
        defer { driver.close() }
        try driver.send([
            "id": "0", "op": "hello", "protocol": 1, "baseURL": proxy.baseURL, "profile": "simplejwt", "clientId": "demo",
            "clientSecret": "demo-secret", "dialect": dialect,
        ])
        #expect(try driver.answer()["ok"] as? Bool == true)
        try driver.send(["id": "1", "op": "login", "username": "alice", "password": "wonderland"])
        #expect(try driver.answer()["ok"] as? Bool == true)
        // SimpleJWT's access tokens live 300 s: expired at the proxy, by its clock.
        _ = try await ProxyTests.send(.POST, proxy.baseURL + "/_authmock/clock/advance", json: #"{"seconds": 301}"#)
        for call in 1...10 {
            try driver.send(["id": "c\(call)", "op": "request", "method": "GET", "path": "/api/me", "headers": ["X-Authmock-Call": "c\(call)"]])
        }
        for _ in 1...10 { _ = try driver.answer() }
        return try await ProxyTests.send(.GET, proxy.baseURL + "/_authmock/verdicts").json
    }

    @Test func theJudgeNamesTheCauseTheRunNames() async throws {
        // What `authmock run` says of the bug on this dialect (case 1.1: ten calls meet one expiry).
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-agreement-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: report) }
        let run = try await runAuthmock([
            "run", "--driver", "\(try referenceDriver()) --fault refresh-per-401", "--case", "1.1", "--profile", "simplejwt", "--json", report.path,
        ])
        #expect(run.status == 1, "\(run.stdout)")
        let cases = (try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any])?["cases"] as? [[String: Any]] ?? []
        let runCauses = cases.first?["causes"] as? [[String: Any]] ?? []
        let expected = try #require(runCauses.first?["id"] as? String, "\(cases)")
        #expect(expected == "no-single-flight")

        let buggy = try await Self.judged(faults: ["refresh-per-401"])
        #expect(buggy["verdict"] as? String == "fail", "\(buggy)")
        let judgedCauses = (buggy["causes"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(judgedCauses.first == expected, "the run says \(expected), the proxy's judge \(judgedCauses)")

        let correct = try await Self.judged(faults: [])
        #expect(correct["verdict"] as? String == "pass", "\(correct)")
    }
}
