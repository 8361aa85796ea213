import AuthmockCore
import AuthmockServer
import DriverProtocol
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The request pipeline as a client meets it: every request of the client is
/// journaled with the tokens its answer issued, requests no route serves are
/// the client's too, and the mock's own endpoints are not.
@Suite struct RequestPipelineTests {
    /// How each dialect signs in and refreshes once, on its own wire.
    static func signInAndRefresh(_ profile: CaseProfile, _ server: TestServer) async throws {
        switch profile {
        case .oauth2:
            let pair = try await server.login()
            #expect(try await server.refresh(try #require(pair.refresh)).status == .ok)
        case .envelope:
            let pair = try await server.backendLogin()
            #expect(try await server.postJSON("/auth/refresh", #"{"refreshToken": "\#(pair.refresh)"}"#).status == .ok)
        case .reissue:
            let pair = try await server.backendLogin()
            #expect(
                try await server.postJSON("/auth/reissue", #"{"accessToken": "\#(pair.access)", "refreshToken": "\#(pair.refresh)"}"#).status == .ok)
        case .renewal:
            let pair = try await server.backendLogin()
            let body = #"{"accessToken": "\#(pair.access)", "refreshToken": "\#(pair.refresh)"}"#
            #expect(try await server.postJSON("/auth/refresh", body, bearer: pair.access).status == .ok)
        case .headerRotation:
            let pair = try await server.backendLogin()
            try await server.expireAccess()
            let answer = try await server.get("/api/me", bearer: pair.refresh)
            #expect(answer.status == .ok)
            #expect(answer.headers[.authorization]?.hasPrefix("Bearer ") == true)
        }
    }

    @Test(arguments: CaseProfile.allCases)
    func everyIssuedTokenIsJournaled(_ profile: CaseProfile) async throws {
        var options = ServerOptions(signingKey: .random())
        options.profile = profile.rawValue
        try await TestServer.run(options) { server in try await Self.checkIssuedTokens(profile, server) }
    }

    static func checkIssuedTokens(_ profile: CaseProfile, _ server: TestServer) async throws {
        try await signInAndRefresh(profile, server)
        let entries = try await server.journal()
        #expect(entries.map { $0["kind"] as? String } == ["login", "refresh"])
        // The journal names the access tokens the authority issued, each once.
        let issued = entries.compactMap { $0["issuedAccess"] as? String }
        let known = Set(try await server.mock.control.tokens().access.map(\.id))
        #expect(issued.count == 2 && Set(issued).count == 2 && Set(issued).isSubset(of: known), "\(issued) vs \(known)")
    }

    /// The scheme is case-insensitive (RFC 9110 section 11.1); a request
    /// with two Authorization fields presents their joined value, which is
    /// no token, so it is refused (not judged by its first field only).
    @Test func authorizationIsReadAsSentOnce() async throws {
        try await TestServer.run { server in
            let access = try await server.login().access
            let mixedCase = try await server.send(.get, "/api/me", headers: [.authorization: "bEaReR \(access)"])
            #expect(mixedCase.status == .ok)
            var twice = HTTPFields()
            twice.append(HTTPField(name: .authorization, value: "Bearer \(access)"))
            twice.append(HTTPField(name: .authorization, value: "Bearer \(access)"))
            let doubled = try await server.send(.get, "/api/me", headers: twice)
            #expect(doubled.status == .unauthorized)
            let entry = try #require(try await server.journal().last)
            #expect((entry["accessToken"] as? [String: Any])?["state"] as? String == "malformed")
        }
    }

    /// HEAD answers wherever GET does: /api/me as /api/notes, /health, /graphql.
    @Test func headIsServedBesideEveryGet() async throws {
        try await TestServer.run { server in
            let access = try await server.login().access
            for path in ["/api/me", "/api/notes", "/api/items/1"] {
                let head = try await server.send(.head, path, headers: [.authorization: "Bearer \(access)"])
                // (Over the wire the HTTP encoder sends no body for HEAD; ConnectionDeadlineTests checks it.)
                #expect(head.status == .ok, "HEAD \(path)")
            }
            #expect(try await server.send(.head, "/health").status == .ok)
            #expect(try await server.send(.head, "/api/me").status == .unauthorized)
        }
    }

    @Test(arguments: CaseProfile.allCases)
    func unroutedRequestsAreTheClients(_ profile: CaseProfile) async throws {
        var options = ServerOptions(signingKey: .random())
        options.profile = profile.rawValue
        try await TestServer.run(options) { server in
            let unknown = try await server.send(.get, "/nowhere")
            #expect(unknown.status == .notFound)
            // A known path with a method it does not serve: a documented error, journaled too.
            let wrongMethod = try await server.send(.delete, "/health")
            #expect(wrongMethod.status == .notFound || wrongMethod.status == .methodNotAllowed)
            #expect(wrongMethod.text.contains("DELETE /health"), "\(wrongMethod.text)")
            // The mock's own endpoints are not the client's.
            _ = try await server.send(.get, "/metrics")
            _ = try await server.control(.get, "/clock")
            _ = try await server.control(.get, "/no-such-control-route")
            let entries = try await server.journal()
            #expect(entries.map { $0["path"] as? String } == ["/nowhere", "/health"])
            #expect(entries.map { $0["kind"] as? String } == ["other", "health"])
            #expect(entries.allSatisfy { $0["errorCode"] as? String != nil }, "\(entries)")
        }
    }
}
