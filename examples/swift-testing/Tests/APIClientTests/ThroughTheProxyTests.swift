import APIClient
import AuthmockTesting
import Foundation
import Testing

/// The app's client against a real backend through `authmock proxy`
/// (docs/proxy.md), in this process: django-oauth-toolkit, started from
/// authmock's test fixtures, behind the proxy, whose clock expires the
/// backend's tokens at once. The proxy's verdicts name the bug the suite
/// names for the same client: none for the client as it ships, and case
/// 1.1's cause with its single flight turned off. Needs python3 with
/// django, djangorestframework and django-oauth-toolkit (`.ci/run` installs
/// them and sets AUTHMOCK_REAL_BACKENDS=1, which runs these tests).
@Suite(
    .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["AUTHMOCK_REAL_BACKENDS"] == "1",
        "set AUTHMOCK_REAL_BACKENDS=1 with django-oauth-toolkit installed to run the client against a real backend"))
struct ThroughTheProxyTests {
    /// authmock's django-oauth-toolkit fixture, serving on a free loopback port until stopped.
    final class RealBackend: Sendable {
        let process: Process
        let input: Pipe
        let baseURL: String
        let clientID: String
        let clientSecret: String

        init() throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent()
            let script = root.appendingPathComponent("Tests/EndToEndTests/Fixtures/oauth-toolkit-server.py")
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script.path]
            process.currentDirectoryURL = script.deletingLastPathComponent()
            input = Pipe()
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            // Its one line: the port and the client.
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { throw BackendError("the backend ended before it listened (is django-oauth-toolkit installed?)") }
                line += chunk
            }
            let started = try JSONSerialization.jsonObject(with: line.prefix { $0 != UInt8(ascii: "\n") }) as? [String: Any] ?? [:]
            guard let port = started["port"] as? Int, let id = started["client_id"] as? String, let secret = started["client_secret"] as? String
            else { throw BackendError("the backend said \(String(decoding: line, as: UTF8.self))") }
            baseURL = "http://127.0.0.1:\(port)"
            (clientID, clientSecret) = (id, secret)
        }

        /// It ends when its input closes.
        func stop() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    struct BackendError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Sign in, then ten calls at once after the proxy's clock expired the
    /// token (django-oauth-toolkit's tokens live 36,000 s): the proxy's
    /// verdict and first cause.
    static func judged(sharesRenewal: Bool) async throws -> (verdict: String, cause: String?) {
        let backend = try RealBackend()
        defer { backend.stop() }
        let proxy = try await MockServer.proxy(upstream: backend.baseURL)
        do {
            let client = APIClient(
                baseURL: try #require(URL(string: proxy.baseURL)), clientID: backend.clientID, clientSecret: backend.clientSecret,
                sharesRenewal: sharesRenewal)
            try await client.signIn(username: "alice", password: "wonderland")
            _ = try await proxy.control.advanceClock(seconds: 36_001)
            await withTaskGroup(of: Void.self) { group in
                for _ in 1...10 { group.addTask { _ = try? await client.send(APIRequest(path: "/api/me")) } }
            }
            let verdicts = try await proxy.control.verdicts()
            await proxy.stop()
            return (verdicts.verdict, verdicts.causes.first?.id)
        } catch {
            await proxy.stop()
            throw error
        }
    }

    @Test func theClientAsItShipsPasses() async throws {
        let judged = try await Self.judged(sharesRenewal: true)
        #expect(judged.verdict == "pass", "\(judged)")
    }

    /// The proxy names the cause `authmock run` names for case 1.1.
    @Test func withoutSingleFlightTheProxyNamesTheSuitesCause() async throws {
        let broken = ClientUnderTest.apiClient(sharesRenewal: false)
        let concurrent = try #require(try AuthmockSuite.builtInCases(for: broken, ids: ["1.1"]).first)
        let suite = await concurrent.run(against: broken)
        let expected = try #require(suite.causes?.first?.id)
        #expect(expected == "no-single-flight")
        let judged = try await Self.judged(sharesRenewal: false)
        #expect(judged.verdict == "fail" && judged.cause == expected, "the suite says \(expected), the proxy \(judged)")
    }
}
