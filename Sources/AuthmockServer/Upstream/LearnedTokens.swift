public import AuthmockCore
public import AuthmockModel
import Crypto
import DequeModule
public import Foundation
import Synchronization

/// The tokens a proxy saw the real backend hand out (`authmock proxy`): the
/// proxy signs nothing, so what it knows of a token is what passed through
/// it. Each is named by its `jti` when it is a JWT with one, else by a
/// digest of its text, and belongs to a login: a sign-in starts one, a
/// refresh continues the login of the refresh token it spent. A token's
/// state at a request's arrival reads the proxy's clock, so moving the
/// clock (or `--expire-after`) expires the backend's tokens at the proxy.
///
/// Bounded by logins, not by refreshes: a login keeps its newest
/// `tokensPerLogin` tokens, and past `maxLogins` logins the oldest login is
/// forgotten whole (a forgotten token is `unknown` when it comes back). A
/// token is kept under the SHA-256 of its text, with only its last
/// characters, so a backend's long JWTs cost 32 bytes of key each.
public final class LearnedTokens: Sendable {
    struct Token: Sendable {
        var id: TokenID
        var kind: PresentedToken.Kind
        var login: Int
        var subject: String?
        var learnedAt: Date
        /// Its own end: the JWT's `exp`, else the lifetime the answer announced.
        var expiresAt: Date?
        /// Set by the control API's `tokens/expire`.
        var expiredAt: Date?
        var revoked = false
        /// A refresh token after the backend handed its login a newer one.
        var superseded = false
        /// The text's last characters, for the control API's listing.
        var tail: String
    }

    /// A token's text, as its digest.
    typealias Key = SHA256.Digest

    private struct State {
        var tokens: [Key: Token] = [:]
        var logins = 0
        /// Each login's tokens, oldest first.
        var byLogin: [Int: Deque<Key>] = [:]
        /// Logins in order of their first token.
        var loginOrder: Deque<Int> = []
        /// Each login's newest refresh token.
        var newestRefresh: [Int: Key] = [:]
        /// Tokens a login's bound let go, newest last, up to `retiredLimit`:
        /// the journal still names them, and a judge reads their login.
        var retired: Deque<(key: Key, token: Token)> = []
        /// The login of each retired token: a refresh that spends one continues it.
        var retiredLogin: [Key: Int] = [:]
    }

    private let state = Mutex(State())
    public let tokensPerLogin: Int
    public let maxLogins: Int
    /// Most tokens let go by their login's bound that are still named to a
    /// judge (about the journal's length: a request names one or two).
    public let retiredLimit: Int
    /// `--expire-after`: an access token this many seconds old (proxy clock) is expired at the proxy.
    public let expireAfterSeconds: Double?

    /// The state a superseded refresh token shows in the journal: the
    /// backend handed its login a newer one. Whether the backend still
    /// takes it is the backend's business; its answer says.
    public static let superseded: PresentedToken.State = "superseded"
    /// A token its login's bound let go: the proxy no longer judges it (it
    /// is `unknown` if it comes back), but a judge still reads its login.
    public static let forgotten: PresentedToken.State = "forgotten"

    public init(expireAfterSeconds: Double?, tokensPerLogin: Int = 16, maxLogins: Int = 10_000, retiredLimit: Int = 100_000) {
        self.expireAfterSeconds = expireAfterSeconds
        self.tokensPerLogin = max(2, tokensPerLogin)
        self.maxLogins = max(1, maxLogins)
        self.retiredLimit = max(0, retiredLimit)
    }

    static func key(_ text: String) -> Key { SHA256.hash(data: Data(text.utf8)) }

    /// Records what a sign-in or refresh answer handed out; returns the ids
    /// the journal shows. `presented`: the refresh (or access) token the
    /// request spent, which names the login a refresh continues.
    public func learn(_ answer: UpstreamAnswer, presented: [String], at now: Date) -> (access: TokenID?, refresh: TokenID?) {
        guard answer.accessToken != nil || answer.refreshToken != nil else { return (nil, nil) }
        let presentedKeys = presented.map(Self.key)
        let accessKey = answer.accessToken.map(Self.key)
        let refreshKey = answer.refreshToken.map(Self.key)
        return state.withLock { state in
            var known: Int? = nil
            for key in presentedKeys where known == nil {
                // A let-go token continues its login while the login is kept; a forgotten login starts anew.
                known = state.tokens[key]?.login ?? state.retiredLogin[key].flatMap { state.byLogin[$0] != nil ? $0 : nil }
            }
            let login: Int
            if let known {
                login = known
            } else {
                state.logins += 1
                login = state.logins
                state.loginOrder.append(login)
                while state.loginOrder.count > maxLogins, let oldest = state.loginOrder.popFirst() { forget(login: oldest, &state) }
            }
            var ids: (access: TokenID?, refresh: TokenID?) = (nil, nil)
            if let text = answer.accessToken, let key = accessKey {
                let claims = Self.claims(text)
                let expiresAt = claims.exp.map(Date.init(timeIntervalSince1970:)) ?? answer.expiresIn.map { now.addingTimeInterval($0) }
                ids.access = remember(
                    &state, key,
                    Token(
                        id: Self.id(key, claims), kind: .access, login: login, subject: claims.sub, learnedAt: now, expiresAt: expiresAt,
                        tail: String(text.suffix(6))))
            }
            if let text = answer.refreshToken, let key = refreshKey {
                let claims = Self.claims(text)
                if let previous = state.newestRefresh[login], previous != key { state.tokens[previous]?.superseded = true }
                state.newestRefresh[login] = key
                ids.refresh = remember(
                    &state, key,
                    Token(
                        id: Self.id(key, claims), kind: .refresh, login: login, subject: claims.sub, learnedAt: now,
                        expiresAt: claims.exp.map(Date.init(timeIntervalSince1970:)), tail: String(text.suffix(6))))
            }
            return ids
        }
    }

    private func remember(_ state: inout State, _ key: Key, _ token: Token) -> TokenID {
        if let known = state.tokens[key] { return known.id }
        state.tokens[key] = token
        state.byLogin[token.login, default: []].append(key)
        while let held = state.byLogin[token.login], held.count > tokensPerLogin, let oldest = state.byLogin[token.login]?.popFirst() {
            if let gone = state.tokens.removeValue(forKey: oldest), retiredLimit > 0 {
                state.retired.append((oldest, gone))
                state.retiredLogin[oldest] = gone.login
                if state.retired.count > retiredLimit, let dropped = state.retired.popFirst() { state.retiredLogin[dropped.key] = nil }
            }
            if state.newestRefresh[token.login] == oldest { state.newestRefresh[token.login] = nil }
        }
        return token.id
    }

    private func forget(login: Int, _ state: inout State) {
        // Its let-go tokens leave the retired list in turn; a snapshot lists none of a forgotten login's.
        for key in state.byLogin.removeValue(forKey: login) ?? [] { state.tokens[key] = nil }
        state.newestRefresh[login] = nil
    }

    /// An access token as it stands at `now`.
    public func access(_ text: String, at now: Date) -> PresentedToken {
        let key = Self.key(text)
        let known = state.withLock { state in
            state.tokens[key].map { token in
                PresentedToken(
                    kind: token.kind == .access ? .access : .refresh, id: token.id.text,
                    state: Self.standing(of: token, at: now, expireAfter: expireAfterSeconds))
            }
        }
        // An unknown token is named outside the lock: reading its claims is the costly part.
        return known ?? PresentedToken(kind: .access, id: Self.id(key, Self.claims(text)).text, state: .unknown)
    }

    /// A refresh token as it stands at `now`.
    public func refresh(_ text: String, at now: Date) -> PresentedToken {
        let key = Self.key(text)
        let known = state.withLock { state in
            state.tokens[key].map { token in
                token.kind == .access
                    ? PresentedToken(kind: .refresh, id: token.id.text, state: .accessToken)
                    : PresentedToken(kind: .refresh, id: token.id.text, state: Self.standing(of: token, at: now, expireAfter: expireAfterSeconds))
            }
        }
        return known ?? PresentedToken(kind: .refresh, id: Self.id(key, Self.claims(text)).text, state: .unknown)
    }

    private static func standing(of token: Token, at now: Date, expireAfter: Double?) -> PresentedToken.State {
        if token.revoked { return "revoked" }
        if let end = end(of: token, expireAfter: expireAfter), end <= now { return "expired" }
        if token.superseded { return Self.superseded }
        return .valid
    }

    /// When a token ends at the proxy: the first of its own end,
    /// `--expire-after` (access tokens), and `tokens/expire`; nil when none says.
    private static func end(of token: Token, expireAfter: Double?) -> Date? {
        let early = token.kind == .access ? expireAfter.map { token.learnedAt.addingTimeInterval($0) } : nil
        return [token.expiresAt, early, token.expiredAt].compactMap { $0 }.min()
    }

    /// The control API's `tokens/expire` and `tokens/revoke` over learned
    /// tokens: `jti` is the id the journal shows, `family` a login
    /// (`login-1`), `subject` the JWT's `sub` where it has one.
    public func change(_ selector: TokenSelector, revoke: Bool, at now: Date) -> TokenChange {
        state.withLock { state in
            var change = TokenChange(access: 0, refresh: 0)
            for (key, token) in state.tokens where Self.selects(selector, token) {
                if revoke {
                    guard !token.revoked else { continue }
                    state.tokens[key]?.revoked = true
                } else {
                    guard token.expiredAt.map({ $0 > now }) ?? true else { continue }
                    state.tokens[key]?.expiredAt = now
                }
                if token.kind == .access { change.access += 1 } else { change.refresh += 1 }
            }
            return change
        }
    }

    private static func selects(_ selector: TokenSelector, _ token: Token) -> Bool {
        switch selector.kind {
        case .access where token.kind != .access, .refresh where token.kind != .refresh: return false
        default: break
        }
        if let jti = selector.jti, jti != token.id.text { return false }
        if let family = selector.family, family != "login-\(token.login)" { return false }
        if let subject = selector.subject, subject != token.subject { return false }
        return true
    }

    /// The control API's `tokens` listing: logins as families; values only
    /// as a short tail. `forgotten`: with the tokens a login's bound let go
    /// (state `forgotten`), which a judge needs: the journal names them, and
    /// a refresh's login is read from the token it presented.
    public func snapshot(at now: Date, forgotten: Bool = false) -> TokenSnapshot {
        state.withLock { state in
            // Oldest login first, each login's tokens oldest first (the let-go ones before the kept).
            let live = Set(state.loginOrder)
            let retired = forgotten ? Dictionary(grouping: state.retired.map(\.token).filter { live.contains($0.login) }, by: \.login) : [:]
            let tokens = state.loginOrder.flatMap { login in
                (retired[login] ?? []) + (state.byLogin[login] ?? []).compactMap { state.tokens[$0] }
            }
            let retiredIDs = Set(retired.values.joined().map(\.id))
            var firstSeen: [Int: Date] = [:]
            for token in tokens where firstSeen[token.login] == nil { firstSeen[token.login] = token.learnedAt }
            let families = firstSeen.sorted { $0.key < $1.key }.map {
                TokenSnapshot.Family(id: "login-\($0.key)", subject: "", clientID: "", state: "live", createdAt: $0.value)
            }
            let listed = { (kind: PresentedToken.Kind) in
                tokens.filter { $0.kind == kind }.map { token in
                    TokenSnapshot.Token(
                        id: token.id.text, family: "login-\(token.login)", subject: token.subject ?? "",
                        state: retiredIDs.contains(token.id)
                            ? Self.forgotten.rawValue : Self.standing(of: token, at: now, expireAfter: self.expireAfterSeconds).rawValue,
                        expiresAt: Self.end(of: token, expireAfter: self.expireAfterSeconds) ?? .distantFuture, tokenTail: token.tail,
                        issuedAt: token.learnedAt,
                        lifetimeSeconds: token.expiresAt.map { $0.timeIntervalSince(token.learnedAt) })
                }
            }
            return TokenSnapshot(families: families, access: listed(.access), refresh: listed(.refresh), pruned: PrunedCounts())
        }
    }

    public func reset() { state.withLock { $0 = State() } }

    public var count: Int { state.withLock { $0.tokens.count } }

    /// A token's name in the journal: its `jti` when it is a JWT with one,
    /// else the first 16 hex digits of its SHA-256 (`sha256:...`).
    /// `key`: the text's digest, which the caller has already made.
    static func id(_ key: Key, _ claims: (jti: String?, exp: Double?, sub: String?)) -> TokenID {
        if let jti = claims.jti, !jti.isEmpty { return TokenID(jti) }
        return TokenID("sha256:" + key.prefix(8).hexString)
    }

    /// A JWT's `jti`, `exp` and `sub`, read without checking its signature
    /// (the proxy holds no key of the backend's): nil for what is no JWT.
    static func claims(_ text: String) -> (jti: String?, exp: Double?, sub: String?) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].utf8.count < 16_384, let data = Data(base64URLEncoded: parts[1]),
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else { return (nil, nil, nil) }
        return (object["jti"] as? String, (object["exp"] as? NSNumber)?.doubleValue, object["sub"] as? String ?? (object["user_id"] as? String))
    }
}

extension LearnedTokens {
    /// The presented tokens' states for the journal, at a proxy. A backend's
    /// API is wherever it is: a call with a bearer token to no path of the
    /// dialect's is an API call.
    func judge(_ route: inout RouteClassification, _ entry: inout JournalEntry, presented access: String?, at now: Date) {
        if let token = access, !token.isEmpty, token != route.refreshToken {
            entry.accessToken = self.access(token, at: now)
            if route.kind == .other || route.kind == .health { route.kind = .resource }
        }
        if let refresh = route.refreshToken { entry.refreshToken = self.refresh(refresh, at: now) }
    }
}
