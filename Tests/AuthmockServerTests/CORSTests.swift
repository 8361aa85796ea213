import AuthmockCore
import AuthmockServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// `cors_origin`: browsers may call the client-facing routes only when it is
/// set; preflights are answered before the journal; exposed headers are the
/// ones a browser interceptor must read.
struct CORSTests {
    static let page = "http://127.0.0.1:9000"
    let origin = HTTPField.Name("Origin")!
    let requestMethod = HTTPField.Name("Access-Control-Request-Method")!
    let requestHeaders = HTTPField.Name("Access-Control-Request-Headers")!

    func options(_ cors: String, profile: String = "oauth2") -> ServerOptions {
        var options = ServerOptions(signingKey: .random())
        options.profile = profile
        options.corsOrigin = cors
        return options
    }

    @Test func offByDefault() async throws {
        try await TestServer.run(options("")) { server in
            let preflight = try await server.send(
                .options, "/api/me", headers: [origin: Self.page, requestMethod: "GET", requestHeaders: "authorization,x-authmock-call"])
            #expect(preflight.headers[.accessControlAllowOrigin] == nil)
            let pair = try await server.login()
            let answer = try await server.send(.get, "/api/me", headers: [.authorization: "Bearer \(pair.access)", origin: Self.page])
            #expect(answer.status == .ok && answer.headers[.accessControlAllowOrigin] == nil)
        }
    }

    @Test(arguments: ["/oauth/token", "/api/me", "/graphql"])
    func preflightIsAnsweredAndNotJournaled(path: String) async throws {
        try await TestServer.run(options(Self.page)) { server in
            let preflight = try await server.send(
                .options, path, headers: [origin: Self.page, requestMethod: "POST", requestHeaders: "authorization,content-type,x-authmock-call"])
            #expect(preflight.status == .noContent)
            #expect(preflight.headers[.accessControlAllowOrigin] == Self.page)
            let allowed = (preflight.headers[.accessControlAllowHeaders] ?? "").lowercased()
            for name in ["authorization", "content-type", "x-authmock-call"] { #expect(allowed.contains(name), "\(allowed)") }
            #expect(try await server.journal("").isEmpty, "a preflight is the browser's, not the client's")
        }
    }

    @Test func realAnswersCarryTheOriginAndExposeTheChallenge() async throws {
        try await TestServer.run(options("*")) { server in
            let refused = try await server.send(.get, "/api/me", headers: [.authorization: "Bearer nope", origin: "http://anywhere.test"])
            #expect(refused.status == .unauthorized)
            #expect(refused.headers[.accessControlAllowOrigin] == "*")
            #expect(refused.headers[.accessControlExposeHeaders]?.contains("WWW-Authenticate") == true)
            #expect(try await server.journal("").count == 1)
        }
    }

    @Test func anOriginNotListedGetsNoCORSHeaders() async throws {
        try await TestServer.run(options("\(Self.page), http://localhost:9000")) { server in
            let other = try await server.send(.options, "/api/me", headers: [origin: "http://evil.test", requestMethod: "GET"])
            #expect(other.headers[.accessControlAllowOrigin] == nil)
            let listed = try await server.send(.options, "/api/me", headers: [origin: "http://localhost:9000", requestMethod: "GET"])
            #expect(listed.headers[.accessControlAllowOrigin] == "http://localhost:9000")
        }
    }

    @Test func headerRotationExposesItsTokenHeader() async throws {
        var options = options("*", profile: "header-rotation")
        options.dialectOptions.rotationHeader = "X-New-Token"
        try await TestServer.run(options) { server in
            let pair = try await server.backendLogin()
            server.mock.clock.advance(seconds: 301)
            let renewed = try await server.send(.get, "/api/me", headers: [.authorization: pair.refresh, origin: Self.page])
            #expect(renewed.headers[HTTPField.Name("X-New-Token")!] != nil)
            #expect(renewed.headers[.accessControlExposeHeaders]?.contains("X-New-Token") == true)
        }
    }

    @Test func aMalformedSettingIsRefusedAtStart() async throws {
        await #expect(throws: SettingsError.self) { _ = try await Authmock(options: options("127.0.0.1:9000")) }
        await #expect(throws: SettingsError.self) { _ = try await Authmock(options: options("http://x.test/path")) }
    }
}
