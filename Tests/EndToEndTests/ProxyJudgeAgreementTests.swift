import Foundation
import Testing

/// Issue 58's measure of the judge: a client with a known refresh bug, run
/// unchanged through `authmock proxy --judge` in front of a real backend,
/// gets the cause `authmock run` names for it on the same dialect; the same
/// client without the bug gets no FAIL. Each client is a driver (authmock's
/// reference driver with and without its `--fault refresh-per-401` switch;
/// drivers/python-google-auth, whose library refreshes on each concurrent
/// 401 on its own thread, unlocked),
/// spoken to over the driver protocol by this test as an app's code would
/// call it: sign in, then ten calls at once after the proxy's clock has
/// expired the token.
@Suite(.serialized) struct ProxyJudgeAgreementTests {
    /// A driver process, a JSON line at a time.
    final class DriverConversation: @unchecked Sendable {
        let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        private var pending = Data()

        /// `command`: the driver's command line, run by the shell from the repository.
        init(_ command: String) throws {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "exec " + command]
            process.currentDirectoryURL = repositoryRoot
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

    /// A real backend and the dialect the proxy and the driver speak.
    struct Backend {
        var fixture: String
        var needs: String
        var profile: String
        /// Seconds of the proxy's clock after which the access token has ended there.
        var expiry: Int
        /// The client the driver signs in as.
        var client: (id: String, secret: String)? = nil
        /// The proxy's own flags beside `--upstream`, `--dialect` and `--judge`.
        var proxyFlags: [String] = []

        /// With `--expire-after 30s`, as the issue's measure asks: the
        /// backend's 5-minute tokens end at the proxy after 30 s of its clock.
        static let simplejwt = Backend(
            fixture: "simplejwt-server.py", needs: "django, djangorestframework and djangorestframework-simplejwt", profile: "simplejwt", expiry: 31,
            proxyFlags: ["--expire-after", "30s"])
        static let oauthToolkit = Backend(
            fixture: "oauth-toolkit-server.py", needs: "django, djangorestframework and django-oauth-toolkit", profile: "oauth2", expiry: 36_001)
    }

    /// The verdicts the proxy gives `driver` on sign-in and ten calls at
    /// once with an expired token, in front of `backend`.
    static func judged(driver command: String, backend: Backend) async throws -> [String: Any] {
        let real = try FixtureServer(backend.fixture, needs: backend.needs)
        defer { real.stop() }
        let proxy = try ServingBinary(
            ["--upstream", real.baseURL, "--profile", backend.profile, "--judge", "--log-level", "error"] + backend.proxyFlags, command: "proxy")
        defer { _ = proxy.interrupt() }
        var hello: [String: Any] = [
            "id": "0", "op": "hello", "protocol": 1, "baseURL": proxy.baseURL, "profile": backend.profile,
            "clientId": real.started["client_id"] as? String ?? "demo", "clientSecret": real.started["client_secret"] as? String ?? "demo-secret",
        ]
        if backend.profile != "oauth2" {
            let description = try await runAuthmock([
                "dialects", "--builtin", "--json", repositoryRoot.appendingPathComponent("dialects/\(backend.profile).yaml").path,
            ])
            hello["dialect"] = try #require(try JSONSerialization.jsonObject(with: Data(description.stdout.utf8)) as? [String: Any])
        }
        let driver = try DriverConversation(command)
        defer { driver.close() }
        try driver.send(hello)
        #expect(try driver.answer()["ok"] as? Bool == true)
        try driver.send(["id": "1", "op": "login", "username": "alice", "password": "wonderland"])
        let login = try driver.answer()
        #expect(login["ok"] as? Bool == true, "\(login)")
        // Expired at the proxy, by its clock: the backend's own clock cannot be moved.
        _ = try await ProxyTests.send(.POST, proxy.baseURL + "/_authmock/clock/advance", json: #"{"seconds": \#(backend.expiry)}"#)
        for call in 1...10 {
            try driver.send(["id": "c\(call)", "op": "request", "method": "GET", "path": "/api/me", "headers": ["X-Authmock-Call": "c\(call)"]])
        }
        for _ in 1...10 { _ = try driver.answer() }
        return try await ProxyTests.send(.GET, proxy.baseURL + "/_authmock/verdicts").json
    }

    /// The first cause `authmock run` names for `driver` on case 1.1 of `profile`.
    static func runCause(driver: String, profile: String) async throws -> String? {
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-agreement-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: report) }
        let run = try await runAuthmock(
            ["run", "--driver", driver, "--case", "1.1", "--profile", profile, "--json", report.path], directory: repositoryRoot)
        #expect(run.status == 1, "\(run.stdout)")
        let cases = (try JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any])?["cases"] as? [[String: Any]] ?? []
        return ((cases.first?["causes"] as? [[String: Any]])?.first?["id"] as? String)
    }

    static func causes(_ verdicts: [String: Any]) -> [String] { (verdicts["causes"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } }

    @Test func theJudgeNamesTheCauseTheRunNamesOnSimpleJWT() async throws {
        let reference = try referenceDriver()
        let expected = try await Self.runCause(driver: "\(reference) --fault refresh-per-401", profile: "simplejwt")
        #expect(expected == "no-single-flight")
        let buggy = try await Self.judged(driver: "\(reference) --fault refresh-per-401", backend: .simplejwt)
        #expect(buggy["verdict"] as? String == "fail", "\(buggy)")
        #expect(Self.causes(buggy).first == expected, "the run says \(expected ?? "nothing"), the proxy's judge \(Self.causes(buggy))")
        let correct = try await Self.judged(driver: reference, backend: .simplejwt)
        #expect(correct["verdict"] as? String == "pass", "\(correct)")
    }

    /// A Python library's own bug (google-auth: every concurrent 401
    /// refreshes, unlocked), in front of a real django-oauth-toolkit server.
    /// (oauth2-client, whose bug is the same, cannot sign in there: it sends
    /// an empty `scope`, which django-oauth-toolkit refuses as
    /// `invalid_scope` and authmock's oauth2 accepts.)
    @Test func theJudgeNamesTheCauseTheRunNamesForAPythonLibrary() async throws {
        let driver = "python3 drivers/python-google-auth/driver.py"
        let expected = try await Self.runCause(driver: driver, profile: "oauth2")
        #expect(expected == "no-single-flight")
        let judged = try await Self.judged(driver: driver, backend: .oauthToolkit)
        #expect(judged["verdict"] as? String == "fail", "\(judged)")
        #expect(Self.causes(judged).first == expected, "the run says \(expected ?? "nothing"), the proxy's judge \(Self.causes(judged))")
        let correct = try await Self.judged(driver: try referenceDriver(), backend: .oauthToolkit)
        #expect(correct["verdict"] as? String == "pass", "\(correct)")
    }
}
