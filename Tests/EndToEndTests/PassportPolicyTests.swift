import AsyncHTTPClient
import Foundation
import NIOCore
import Testing

/// The `passport` dialect's token policy against a real server with the
/// same policy: django-oauth-toolkit from PyPI (Tests/EndToEndTests/
/// Fixtures/oauth-toolkit-server.py) rotates as league/oauth2-server does
/// under Laravel Passport: a refresh revokes the access token it replaces
/// and the refresh token it was given, and a rotated refresh token presented
/// again is refused while the login lives on. Both servers get the same
/// requests; which of them work must agree step by step, and a refused API
/// call is a 401 at both. (Passport's own answers, from league's source, are
/// checked by DocExampleTests against docs/profiles/passport.md: no PHP
/// runs here.)
@Suite(.serialized) struct PassportPolicyTests {
    struct Step: Equatable, CustomStringConvertible {
        var name: String
        var status: Int
        var works: Bool { (200..<300).contains(status) }
        var description: String { "\(name): \(status)" }
    }

    @Test func aRefreshRevokesTheAccessTokenItReplacesAsDjangoOAuthToolkitDoes() async throws {
        let real = try FixtureServer("oauth-toolkit-server.py", needs: "django, djangorestframework and django-oauth-toolkit")
        defer { real.stop() }
        let mock = try ServingBinary(["--profile", "passport", "--log-level", "error"])
        defer { _ = mock.interrupt() }
        let client = "client_id=\(real.started["client_id"] as? String ?? "")&client_secret=\(real.started["client_secret"] as? String ?? "")"
        let realSteps = try await Self.conversation(real.baseURL, client: client)
        let mockSteps = try await Self.conversation(mock.baseURL, client: client)
        #expect(realSteps.map(\.name) == mockSteps.map(\.name))
        for (real, mocked) in zip(realSteps, mockSteps) {
            #expect(real.works == mocked.works, "\(real.name): django-oauth-toolkit \(real.status), authmock \(mocked.status)")
            if real.name.hasPrefix("API"), !real.works { #expect(mocked.status == 401 && real.status == 401, "\(real) \(mocked)") }
        }
        // The policy itself, so that two servers agreeing on something else fail too.
        let expected = [
            "sign-in": true, "API with the first token": true, "refresh": true, "API with the replaced token": false,
            "API with the new token": true, "the rotated refresh token again": false, "API after the reuse": true,
            "refresh with its successor": true, "API with the token that replaced": false, "API with the newest token": true,
            "a second login": true, "refresh of the first login": true, "API of the second login": true,
        ]
        #expect(Dictionary(uniqueKeysWithValues: mockSteps.map { ($0.name, $0.works) }) == expected, "\(mockSteps)")
    }

    /// The same requests to one server, tokens from its own answers.
    static func conversation(_ baseURL: String, client: String) async throws -> [Step] {
        var steps: [Step] = []
        func token(_ grant: String, name: String) async throws -> (access: String, refresh: String)? {
            var request = HTTPClientRequest(url: baseURL + "/oauth/token")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.headers.add(name: "Accept", value: "application/json")
            request.body = .bytes(ByteBuffer(string: grant + "&" + client))
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 1 << 20)
            steps.append(Step(name: name, status: Int(response.status.code)))
            let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
            guard let access = object?["access_token"] as? String, let refresh = object?["refresh_token"] as? String else { return nil }
            return (access, refresh)
        }
        func call(_ access: String, name: String) async throws {
            var request = HTTPClientRequest(url: baseURL + "/api/me")
            request.headers.add(name: "Authorization", value: "Bearer \(access)")
            request.headers.add(name: "Accept", value: "application/json")
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            _ = try await response.body.collect(upTo: 1 << 20)
            steps.append(Step(name: name, status: Int(response.status.code)))
        }
        let password = "grant_type=password&username=alice&password=wonderland"
        let first = try #require(try await token(password, name: "sign-in"))
        try await call(first.access, name: "API with the first token")
        let second = try #require(try await token("grant_type=refresh_token&refresh_token=\(first.refresh)", name: "refresh"))
        try await call(first.access, name: "API with the replaced token")
        try await call(second.access, name: "API with the new token")
        _ = try await token("grant_type=refresh_token&refresh_token=\(first.refresh)", name: "the rotated refresh token again")
        try await call(second.access, name: "API after the reuse")
        let third = try #require(try await token("grant_type=refresh_token&refresh_token=\(second.refresh)", name: "refresh with its successor"))
        try await call(second.access, name: "API with the token that replaced")
        try await call(third.access, name: "API with the newest token")
        let other = try #require(try await token(password, name: "a second login"))
        _ = try await token("grant_type=refresh_token&refresh_token=\(third.refresh)", name: "refresh of the first login")
        try await call(other.access, name: "API of the second login")
        return steps
    }
}
