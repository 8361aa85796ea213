import AuthmockTesting
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
import ReferenceClient
import Testing
import XCTest

/// The reference client in this process, with `faults` switched on.
private func reference(_ faults: Set<ClientFault> = []) -> ClientUnderTest {
    ClientUnderTest(
        name: "authmock-reference", version: "0.1.0", profiles: ["oauth2"],
        capabilities: [Capability.url, Capability.logout, Capability.bodyStream, Capability.graphQL, Capability.oidc]
    ) { hello in
        ReferenceDriver(
            client: ReferenceClient(
                baseURL: hello.baseURL, clientID: hello.clientID, clientSecret: hello.clientSecret, faults: faults))
    }
}

/// A client that answers nothing: every call waits forever, ignoring cancellation.
private struct SilentClient: DriverClient {
    func login(username: String, password: String) async -> DriverOutcome { await forever() }
    func request(_ request: DriverRequest) async -> DriverOutcome { await forever() }
    private func forever() async -> DriverOutcome {
        await withCheckedContinuation { (_: CheckedContinuation<Void, Never>) in }
        return DriverOutcome(.ok)
    }
}

@Suite struct AuthmockTestingTests {
    @Test func theBuiltInCasesAreThoseTheClientCanRun() throws {
        let all = try AuthmockSuite.builtInCases(for: reference())
        #expect(all.contains { $0.id == "1.1 [oauth2]" })
        #expect(all.allSatisfy { $0.profile == "oauth2" })
        // Without the logout capability, the cases that sign out are not offered.
        let plain = ClientUnderTest(name: "plain") { _ in SilentClient() }
        let offered = try AuthmockSuite.builtInCases(for: plain)
        #expect(offered.count < all.count)
        #expect(!offered.contains { $0.scenario.id == "9.1" })
        #expect(try AuthmockSuite.builtInCases(for: plain, ids: ["1.*"]).allSatisfy { $0.scenario.id.hasPrefix("1.") })
    }

    @Test func aDialectTheClientNamesMustExist() {
        let client = ClientUnderTest(name: "x", profiles: ["okta"]) { _ in SilentClient() }
        #expect(throws: SuiteError.self) { try AuthmockSuite.builtInCases(for: client) }
    }

    @Test func aBuiltInDialectIsServedFromItsFile() throws {
        let client = ClientUnderTest(name: "x", profiles: ["keycloak"], capabilities: [Capability.dialect]) { _ in SilentClient() }
        let cases = try AuthmockSuite.builtInCases(for: client)
        #expect(!cases.isEmpty)
        #expect(cases.allSatisfy { $0.profile == "keycloak" })
    }

    @Test func aCorrectClientPassesInProcess() async throws {
        let cases = try AuthmockSuite.builtInCases(for: reference(), ids: ["1.1", "2.1", "3.1"])
        #expect(cases.count == 3)
        let results = await AuthmockSuite.run(cases, against: reference())
        for result in results { #expect(result.verdict == .pass, "\(AuthmockCase.failureMessage(result))") }
    }

    /// The teeth: a client without single flight fails 1.1, and the failure
    /// message names the broken expectation with the requests as evidence.
    @Test func aBrokenSingleFlightFailsWithEvidence() async throws {
        let broken = reference([.refreshPer401])
        let concurrent = try #require(try AuthmockSuite.builtInCases(for: broken, ids: ["1.1"]).first)
        let result = await concurrent.run(against: broken)
        #expect(result.verdict == .fail)
        let message = AuthmockCase.failureMessage(result)
        #expect(message.contains("FAIL 1.1 [oauth2]"))
        #expect(message.contains("x superfluous_refreshes"), "\(message)")
        #expect(message.contains("POST /oauth/token"), "\(message)")
    }

    /// One cause, many cases: its evidence is printed with the first case
    /// only; the others name it and that case, with their own findings.
    @Test func aCauseIsShownWithItsEvidenceOnce() {
        func failed(_ id: String) -> CaseResult {
            var result = CaseResult(
                id: id, name: "n", profile: "oauth2", level: "must", file: "-", verdict: .fail,
                findings: [Finding(expectation: "refreshes", passed: false, message: "saw 3", evidence: ["#2 POST /oauth/token"])],
                calls: [], journal: [], driverStderr: "", seconds: 0)
            result.causes = [Cause(id: "test-only-cause-\(UUID().uuidString)", title: "a test cause")]
            return result
        }
        var first = failed("1.1")
        var second = failed("1.2")
        second.causes = first.causes
        let shown = AuthmockCase.failureMessage(first)
        let again = AuthmockCase.failureMessage(second)
        #expect(shown.contains("#2 POST /oauth/token"), "\(shown)")
        #expect(!again.contains("#2 POST /oauth/token") && again.contains("its evidence: 1.1 [oauth2], above"), "\(again)")
        #expect(again.contains("x refreshes: saw 3"), "\(again)")
        first.causes = nil
        #expect(AuthmockCase.failureMessage(first).contains("#2 POST /oauth/token"))
    }

    /// A case of the test's own (a file), with a short timeout: a client
    /// that never answers ends it as an ERROR by then.
    @Test func aClientThatNeverAnswersIsAnErrorNotAHang() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authmock-testing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("own.yaml").path
        try """
        id: own.1
        name: a call after sign-in
        description: The client signs in and makes one call; it answers neither.
        profiles: [oauth2]
        level: must
        timeout: 3
        steps:
          - login: {}
          - request: {method: GET, path: /api/me}
        expect:
          outcomes: {ok: all}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let silent = ClientUnderTest(name: "silent") { _ in SilentClient() }
        let own = try AuthmockSuite.cases(for: silent, files: [file], builtIn: false)
        #expect(own.map(\.id) == ["own.1 [oauth2]"])
        let started = ContinuousClock.now
        let result = await own[0].run(against: silent)
        #expect(result.verdict == .error)
        #expect(result.reason?.contains("unanswered") == true, "\(result.reason ?? "")")
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test func aClientThatCannotBeMadeIsAnError() async throws {
        struct Refused: Error {}
        let refused = ClientUnderTest(name: "refused") { _ in throw Refused() }
        let first = try #require(try AuthmockSuite.builtInCases(for: refused, ids: ["1.1"]).first)
        let result = await first.run(against: refused)
        #expect(result.verdict == .error)
        #expect(result.reason?.contains("cannot create the client") == true, "\(result.reason ?? "")")
    }

    /// A mock of a test's own: started on a free port, steered, stopped.
    @Test func aMockStartsSteersAndStops() async throws {
        let mock = try await MockServer.start { $0.tokens.accessTTL = 60 }
        let client = ReferenceClient(
            baseURL: mock.baseURL, clientID: mock.control.client.id, clientSecret: mock.control.client.secret ?? "")
        #expect(await client.login(username: "alice", password: "wonderland").kind == .ok)
        #expect(await client.request(method: "GET", path: "/api/me", headers: [:], body: nil).status == 200)
        _ = try await mock.control.advanceClock(seconds: 120)
        _ = mock.control.addFault(FaultRule(match: .init(kinds: [.refresh]), times: 1, action: .respond(status: 503, headers: [:], body: nil)))
        let outcome = await client.request(method: "GET", path: "/api/me", headers: [:], body: nil)
        #expect(outcome.status == 503 || outcome.kind != .ok)
        let refreshes = try await mock.control.journal().entries.filter { $0.kind == .refresh }
        #expect(refreshes.first?.status == 503)
        await client.close()
        let url = mock.baseURL
        await mock.stop()
        let afterStop = try? await URLSession.shared.data(from: URL(string: url + "/health")!)
        #expect(afterStop == nil)
    }

    @Test func aDialectFileOrAnUnknownNameStartsOrIsRefused() async throws {
        try await MockServer.with(dialect: "keycloak") { mock in
            #expect(mock.options.profile == "keycloak")
        }
        await #expect(throws: StartError.self) { try await MockServer.start(dialect: "okta") }
    }
}

/// The XCTest entry: the same cases, each FAIL or ERROR an XCTest failure.
final class AuthmockTestingXCTests: XCTestCase {
    func testTheReferenceClientPassesThroughXCTest() async throws {
        let cases = try AuthmockSuite.builtInCases(for: reference(), ids: ["1.2", "5.1"])
        XCTAssertEqual(cases.count, 2)
        let results = await AuthmockSuite.assertPasses(cases, against: reference())
        XCTAssertEqual(results.map(\.verdict), [.pass, .pass])
        let single = await cases[0].assertPasses(reference())
        XCTAssertEqual(single.verdict, .pass)
    }
}
