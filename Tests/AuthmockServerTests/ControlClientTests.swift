import AuthmockCore
import AuthmockModel
import AuthmockControlClient
import AuthmockServer
import Foundation
import Testing

/// `ControlClient` steers a server over real HTTP, one typed call per
/// `ControlOperation`, and says what went wrong when the server refuses.
@Suite struct ControlClientTests {
    func live(
        _ options: ServerOptions = ServerOptions(port: 0, signingKey: .random()),
        _ body: @escaping @Sendable (TestServer, ControlClient) async throws -> Void
    )
        async throws
    {
        try await TestServer.run(options, setup: .live) { server in
            try await body(server, ControlClient(baseURL: server.mock.baseURL, adminToken: options.adminToken))
        }
    }

    @Test func everyOperationAnswersTyped() async throws {
        try await live { server, control in
            try await Self.steer(control, signIn: { _ = try await server.login() })
            // A rule as written in the control API's JSON.
            let rule = try await control.addFault(json: #"{"match": {"kind": "refresh"}, "times": 2, "action": {"type": "respond", "status": 503}}"#)
            #expect(rule.rule == FaultRule(match: .init(kinds: [.refresh]), times: 2, action: .respond(status: 503, headers: [:], body: nil)))
            #expect(try await control.clearFaults() == 1)
        }
    }

    /// One helper, written against `MockSteering`, steers a mock in this
    /// process (`MockControl`) and one over HTTP (`ControlClient`) alike.
    @Test func theSameHelperSteersAMockInThisProcess() async throws {
        try await TestServer.run(ServerOptions(port: 0, signingKey: .random())) { server in
            try await Self.steer(server.mock.control, signIn: { _ = try await server.login() })
        }
    }

    /// Every operation of `MockSteering`, with the answers a mock gives it.
    static func steer(_ control: some MockSteering, signIn: () async throws -> Void) async throws {
        #expect(try await control.advanceClock(seconds: 61).offsetSeconds == 61)
        #expect(try await control.setClock(offsetSeconds: -5).offsetSeconds == -5)
        #expect(try await control.clock().offsetSeconds == -5)
        try await signIn()
        let snapshot = try await control.tokens()
        #expect(snapshot.families.count == 1 && snapshot.access.count == 1)
        let first = try await control.addFault(
            FaultRule(match: .init(kinds: [.refresh]), times: 2, action: .respond(status: 503, headers: [:], body: nil)))
        let typed = try await control.addFault(
            FaultRule(match: .init(method: "POST", header: ("X-Trace", nil)), times: nil, action: .dropResponse))
        #expect(typed.rule.times == nil && typed.rule.match.header?.name == "X-Trace" && typed.id == first.id + 1 && !typed.exhausted)
        #expect(try await control.faults().map(\.id) == [first.id, typed.id])
        #expect(try await control.clearFaults() == 2)
        let logins = try await control.journal(JournalFilter(kinds: [.login]))
        #expect(logins.entries.map(\.status) == [200] && logins.last == logins.entries.last?.seq && (logins.held ?? 0) >= 1)
        #expect(try await control.journalCount(JournalFilter(kinds: [.login], since: logins.entries[0].seq)) == 0)
        // Counted on arrival: the sign-in, and no refresh.
        #expect(try await control.arrivals([.login]) == 1)
        #expect(try await control.arrivals([.refresh, .resource]) == 0)
        #expect(try await control.expire(TokenSelector(kind: .access)).access == 1)
        #expect(try await control.revoke(TokenSelector(kind: .refresh)).refresh == 1)
        #expect(try await control.keys().algorithm == "HS256")
        _ = try await control.prune()
        try await control.reset()
        #expect(try await control.tokens().families.isEmpty)
        #expect(try await control.clock().offsetSeconds == 0)
    }

    @Test func refusalsCarryTheServersAnswer() async throws {
        try await live { _, control in
            // HS256's secret is shared, not published: nothing to rotate.
            let refused = await #expect(throws: ControlClientError.self) { try await control.rotateKeys() }
            #expect(refused?.status == 409)
            #expect(refused?.description.contains("POST /_authmock/keys/rotate answered 409") == true)
            let invalid = await #expect(throws: ControlClientError.self) { try await control.addFault(json: #"{"action": {"type": "teleport"}}"#) }
            #expect(invalid?.status == 400)
            #expect(invalid?.body.contains("teleport") == true)
        }
        var guarded = ServerOptions(port: 0, signingKey: .random())
        guarded.adminToken = "s3cret-admin"
        try await live(guarded) { server, control in
            let reading = try await control.clock()
            #expect(reading.offsetSeconds == 0)
            let stranger = ControlClient(baseURL: server.mock.baseURL)
            let refused = await #expect(throws: ControlClientError.self) { try await stranger.clock() }
            #expect(refused?.status == 401)
        }
        let nobody = ControlClient(baseURL: "http://127.0.0.1:9", timeout: .milliseconds(300))
        let silence = await #expect(throws: ControlClientError.self) { try await nobody.reset() }
        #expect(silence?.status == nil)
        #expect(silence?.description.contains("no answer from http://127.0.0.1:9") == true)
    }

    @Test func theDiscoveryListsEveryOperation() async throws {
        try await live { _, control in
            let listing = try JSONSerialization.jsonObject(with: try await control.send(.routes)) as? [String: Any]
            let routes = try #require(listing?["routes"] as? [[String: String]])
            #expect(routes.map { "\($0["method"]!) \($0["path"]!)" } == ControlOperation.allCases.map { "\($0.method) /_authmock\($0.path)" })
        }
    }
}

/// A fault rule has one wire shape: what it encodes is what it decodes, and
/// decoding refuses what the control API refuses, in the same words.
@Suite struct FaultRuleWireTests {
    static let rules: [FaultRule] = [
        FaultRule(action: .closeConnection),
        FaultRule(match: .init(method: "POST", pathPrefix: "/oauth", kinds: [.login, .refresh]), times: nil, action: .delay(milliseconds: 250)),
        FaultRule(match: .init(header: ("X-Call", "7")), times: 3, action: .respond(status: 503, headers: ["Retry-After": "2"], body: "busy")),
        FaultRule(action: .gather(count: 4, milliseconds: 2_000, quietMilliseconds: 150)),
        FaultRule(action: .delayResponse(milliseconds: 10)),
        FaultRule(action: .dropResponse),
        FaultRule(action: .idToken(claims: ["nonce": "other"])),
    ]

    @Test(arguments: rules)
    func aRuleSurvivesItsOwnShape(_ rule: FaultRule) throws {
        let data = try JSONEncoder().encode(rule)
        #expect(try JSONDecoder().decode(FaultRule.self, from: data) == rule, "\(String(decoding: data, as: UTF8.self))")
        // The control API's parse reads the same bytes the same way.
        #expect(try FaultRule(StrictObject(json: data)) == rule)
    }

    @Test func decodingRefusesInTheControlAPIsWords() throws {
        let bad = Data(#"{"action": {"type": "respond", "status": 99}}"#.utf8)
        let parsed = #expect(throws: ControlInputError.self) { try FaultRule(StrictObject(json: bad)) }
        let decoded = #expect(throws: DecodingError.self) { try JSONDecoder().decode(FaultRule.self, from: bad) }
        guard case .dataCorrupted(let context) = decoded else { Issue.record("\(String(describing: decoded))"); return }
        #expect(context.debugDescription == parsed?.message)
    }
}
