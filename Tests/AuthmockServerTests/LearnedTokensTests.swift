import AuthmockCore
import AuthmockModel
import AuthmockServer
import Foundation
import Testing

/// What `authmock proxy` keeps of the backend's tokens: their states by the
/// proxy's clock, and memory bounded by logins, not by refreshes.
struct LearnedTokensTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A JWT with these claims (unsigned: the proxy reads, never verifies).
    static func jwt(_ claims: [String: Any]) -> String {
        func part(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
                of: "=", with: "")
        }
        let body = try! JSONSerialization.data(withJSONObject: claims)
        return part(Data(#"{"alg":"HS256"}"#.utf8)) + "." + part(body) + ".c2ln"
    }

    @Test func aLoginRefreshingForeverKeepsABoundedNumberOfTokens() {
        let tokens = LearnedTokens(expireAfterSeconds: nil, tokensPerLogin: 8)
        var refresh = "refresh-0"
        _ = tokens.learn(UpstreamAnswer(accessToken: "access-0", refreshToken: refresh), presented: [], at: Self.start)
        for round in 1...1_000 {
            let next = "refresh-\(round)"
            _ = tokens.learn(UpstreamAnswer(accessToken: "access-\(round)", refreshToken: next), presented: [refresh], at: Self.start)
            refresh = next
        }
        #expect(tokens.count <= 8, "one login, a thousand refreshes: \(tokens.count) tokens kept")
        #expect(tokens.refresh(refresh, at: Self.start).state == .valid)
        #expect(tokens.refresh("refresh-999", at: Self.start).state == LearnedTokens.superseded)
        #expect(tokens.access("access-0", at: Self.start).state == .unknown, "the oldest is forgotten")
        #expect(tokens.snapshot(at: Self.start).families.count == 1, "every refresh continued the one login")
    }

    @Test func pastTheLoginBoundTheOldestLoginIsForgottenWhole() {
        let tokens = LearnedTokens(expireAfterSeconds: nil, tokensPerLogin: 4, maxLogins: 3)
        for login in 1...10 {
            _ = tokens.learn(UpstreamAnswer(accessToken: "a\(login)", refreshToken: "r\(login)"), presented: [], at: Self.start)
        }
        #expect(tokens.count == 6, "three logins of two tokens")
        #expect(tokens.access("a7", at: Self.start).state == .unknown)
        #expect(tokens.access("a10", at: Self.start).state == .valid)
    }

    @Test func statesFollowTheProxysClock() {
        let tokens = LearnedTokens(expireAfterSeconds: 30)
        let access = Self.jwt(["jti": "j-1", "exp": Self.start.timeIntervalSince1970 + 300, "sub": "alice"])
        let ids = tokens.learn(UpstreamAnswer(accessToken: access, refreshToken: "opaque-refresh"), presented: [], at: Self.start)
        #expect(ids.access?.text == "j-1", "a JWT is named by its jti")
        #expect(ids.refresh?.text.hasPrefix("sha256:") == true, "an opaque token by its digest: \(ids.refresh?.text ?? "")")
        #expect(tokens.access(access, at: Self.start.addingTimeInterval(29)).state == .valid)
        #expect(tokens.access(access, at: Self.start.addingTimeInterval(30)).state == "expired", "--expire-after")
        #expect(tokens.refresh(access, at: Self.start).state == .accessToken, "an access token where a refresh token goes")
        let change = tokens.change(TokenSelector(kind: .refresh), revoke: true, at: Self.start)
        #expect(change == TokenChange(access: 0, refresh: 1))
        #expect(tokens.refresh("opaque-refresh", at: Self.start).state == "revoked")
        let listing = tokens.snapshot(at: Self.start)
        #expect(listing.access.first?.subject == "alice" && listing.access.first?.expiresAt == Self.start.addingTimeInterval(30))
    }
}
