import AuthmockCore
import AuthmockServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// The header-rotation dialect's two flows, grace window and ordering.
struct HeaderRotationTests {
    func options(_ configure: (inout DialectOptions) -> Void = { _ in }) -> ServerOptions {
        var options = ServerOptions(signingKey: .random())
        options.profile = "header-rotation"
        configure(&options.dialectOptions)
        return options
    }

    @Test func refreshTokenInAuthorizationServesAndHandsOutANewAccessToken() async throws {
        try await TestServer.run(options()) { server in
            let pair = try await server.backendLogin()
            #expect(try await server.get("/api/me", bearer: pair.access).headers[.authorization] == nil, "no rotation without a reason")
            server.mock.clock.advance(seconds: 301)
            #expect(try await server.get("/api/me", bearer: pair.access).status == .unauthorized)
            // Without the Bearer prefix works too.
            let served = try await server.send(.post, "/api/notes", headers: [.authorization: pair.refresh], body: "{}")
            #expect(served.status == .ok)
            let header = try #require(served.headers[.authorization])
            #expect(header.hasPrefix("Bearer "))
            let fresh = String(header.dropFirst(7))
            #expect(try await server.get("/api/me", bearer: fresh).status == .ok)
            // The refresh token stays usable: this dialect does not rotate it.
            #expect(try await server.get("/api/me", bearer: pair.refresh).status == .ok)
            let entries = try await server.journal("kind=refresh")
            #expect(entries.count == 2)
            #expect(entries.first?["issuedAccess"] as? String != nil)
        }
    }

    @Test func rotateEveryNthAnswerWithACustomHeaderAndGrace() async throws {
        let options = options {
            $0.rotateEvery = 3
            $0.rotationHeader = "X-Access-Token"
            $0.rotationGraceSeconds = 5
        }
        try await TestServer.run(options) { server in
            let first = try await server.backendLogin().access
            let name = HTTPField.Name("X-Access-Token")!
            #expect(try await server.get("/api/me", bearer: first).headers[name] == nil)
            #expect(try await server.get("/api/me", bearer: first).headers[name] == nil)
            let third = try await server.get("/api/me", bearer: first)
            let second = try #require(third.headers[name], "the third answer rotates")
            #expect(!second.hasPrefix("Bearer "), "a custom header carries the bare token")
            #expect(second != first)
            // The old token keeps working inside the grace window, then stops.
            server.mock.clock.advance(seconds: 4)
            #expect(try await server.get("/api/me", bearer: first).status == .ok)
            server.mock.clock.advance(seconds: 2)
            let late = try await server.get("/api/me", bearer: first)
            #expect(late.status == .unauthorized && late.backendCode == "token_expired")
            #expect(try await server.get("/api/me", bearer: second).status == .ok)
        }
    }

    /// Twenty requests present the same valid refresh token at once: every
    /// one is served (the probe saw 13 of 99 refused as revoked, because a
    /// concurrent refresh superseded the token issued a moment before).
    @Test func concurrentRefreshesWithOneValidRefreshTokenAreAllServed() async throws {
        try await TestServer.run(options()) { server in
            let pair = try await server.backendLogin()
            server.mock.clock.advance(seconds: 301)
            for _ in 0..<5 {
                let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<20 { group.addTask { try await server.get("/api/me", bearer: pair.refresh).status.code } }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
            }
        }
    }

    @Test func concurrentRotationsNeverHandOutAnOlderToken() async throws {
        try await TestServer.run(
            options {
                $0.rotateEvery = 1; $0.rotationGraceSeconds = 60
            }
        ) { server in
            let first = try await server.backendLogin().access
            let tokens = try await withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<20 { group.addTask { try await server.get("/api/me", bearer: first).headers[.authorization] } }
                return try await group.reduce(into: [String]()) { if let token = $1 { $0.append(token) } }
            }
            #expect(tokens.count == 20)
            // Every header was the newest token of the login when it was sent; the
            // very newest one is among them and is what a later answer carries.
            let later = try #require(try await server.get("/api/me", bearer: first).headers[.authorization])
            let claims = await server.mock.authority.signedClaims(String(later.dropFirst(7)))
            let laterIssued = try #require(claims).iat.value
            for token in tokens {
                let issued = try #require(await server.mock.authority.signedClaims(String(token.dropFirst(7)))).iat.value
                #expect(issued <= laterIssued)
            }
        }
    }
}

/// `serve --profile NAME` tells how to sign in and refresh in that dialect.
struct DialectOptionsTests {
    @Test func badDialectOptionsAreRefused() async throws {
        var options = ServerOptions(signingKey: .random())
        options.dialectOptions.rotateEvery = 0
        await #expect(throws: SettingsError.self) { _ = try await Authmock(options: options) }
        options.dialectOptions = DialectOptions()
        options.dialectOptions.refreshFailureStatus = 200
        await #expect(throws: SettingsError.self) { _ = try await Authmock(options: options) }
    }

    @Test func refreshFailureStatusIsConfigurable() async throws {
        var options = ServerOptions(signingKey: .random())
        options.profile = "reissue"
        options.dialectOptions.refreshFailureStatus = 401
        try await TestServer.run(options) { server in
            let pair = try await server.backendLogin()
            let response = try await server.postJSON("/auth/reissue", #"{"accessToken": "\#(pair.access)", "refreshToken": "nope"}"#)
            #expect(response.status == .unauthorized && response.backendCode == "refresh_token_invalid")
        }
    }

    @Test func rfcLaxDropsTheChallengeAndAnswers401AtTheTokenEndpoint() async throws {
        var options = ServerOptions(signingKey: .random())
        options.dialectOptions.oauth2Errors = .rfcLax
        try await TestServer.run(options) { server in
            let unknownGrant = try await server.form("/oauth/token", [("grant_type", "implicit")])
            #expect(unknownGrant.status == .unauthorized && unknownGrant.errorCode == "unsupported_grant_type")
            let expired = try await server.get("/api/me", bearer: nil)
            #expect(expired.status == .unauthorized)
            #expect(expired.headers[.wwwAuthenticate] == nil)
            #expect(try await server.refresh("dead").errorCode == "invalid_request")
        }
    }
}
