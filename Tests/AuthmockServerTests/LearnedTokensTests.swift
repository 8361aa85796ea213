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

    /// Ten refreshes of one token that all succeed (a backend without a
    /// lock, a client without single flight) hand out more tokens than a
    /// login keeps: the judge still reads the login of the token they all
    /// presented, or it would call them refreshes of no login (stop 71's
    /// flaky "10 refreshes: 10 unknown").
    @Test func aJudgeStillReadsTheLoginOfTokensTheBoundLetGo() throws {
        let tokens = LearnedTokens(expireAfterSeconds: nil, tokensPerLogin: 4, retiredLimit: 32)
        let login = tokens.learn(UpstreamAnswer(accessToken: "access-0", refreshToken: "refresh-0"), presented: [], at: Self.start)
        for round in 1...10 {
            _ = tokens.learn(
                UpstreamAnswer(accessToken: "access-\(round)", refreshToken: "refresh-\(round)"), presented: ["refresh-0"], at: Self.start)
        }
        let first = try #require(login.refresh?.text)
        #expect(!tokens.snapshot(at: Self.start).refresh.contains { $0.id == first }, "the listing keeps the bound")
        let judged = tokens.snapshot(at: Self.start, forgotten: true)
        let kept = try #require(judged.refresh.first { $0.id == first }, "retired, not forgotten by the judge")
        #expect(kept.family == "login-1" && kept.state == LearnedTokens.forgotten.rawValue)
        #expect(judged.families.count == 1, "every refresh continued the login of the token it spent, let go or not")
        #expect(judged.access.count + judged.refresh.count == 22)
        // Bounded too: past retiredLimit the oldest let-go tokens are forgotten by the judge as well.
        let bounded = LearnedTokens(expireAfterSeconds: nil, tokensPerLogin: 4, retiredLimit: 8)
        var refresh = "r-0"
        _ = bounded.learn(UpstreamAnswer(accessToken: "a-0", refreshToken: refresh), presented: [], at: Self.start)
        for round in 1...1_000 {
            _ = bounded.learn(UpstreamAnswer(accessToken: "a-\(round)", refreshToken: "r-\(round)"), presented: [refresh], at: Self.start)
            refresh = "r-\(round)"
        }
        let listed = bounded.snapshot(at: Self.start, forgotten: true)
        #expect(listed.access.count + listed.refresh.count == 4 + 8)
    }

    /// A let-go token of a login forgotten whole starts a login of its own
    /// when it comes back: it cannot add tokens to a login no bound counts.
    @Test func aLetGoTokenOfAForgottenLoginStartsANewLogin() {
        let tokens = LearnedTokens(expireAfterSeconds: nil, tokensPerLogin: 2, maxLogins: 1, retiredLimit: 8)
        _ = tokens.learn(UpstreamAnswer(accessToken: "a-0", refreshToken: "r-0"), presented: [], at: Self.start)
        _ = tokens.learn(UpstreamAnswer(accessToken: "a-1", refreshToken: "r-1"), presented: ["r-0"], at: Self.start)
        // A second login forgets the first whole; then r-0, let go before, comes back.
        _ = tokens.learn(UpstreamAnswer(accessToken: "b-0", refreshToken: "s-0"), presented: [], at: Self.start)
        _ = tokens.learn(UpstreamAnswer(accessToken: "a-2", refreshToken: "r-2"), presented: ["r-0"], at: Self.start)
        let listed = tokens.snapshot(at: Self.start, forgotten: true)
        #expect(listed.families.map(\.id) == ["login-3"], "the answer to r-0 is a login of its own, the only one kept")
        #expect(tokens.count == 2)
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
