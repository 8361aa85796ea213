/// Lifetimes and rotation rules shared by every dialect.
public struct TokenSettings: Sendable, Equatable {
    /// Access-token lifetime in seconds (at least 1).
    public var accessTTL: Int
    /// Lifetime of the access token handed out at sign-in, when it differs:
    /// a case about the client's own clock signs in with a short-lived token
    /// and gets long-lived ones from every refresh, so it measures the
    /// client's refresh logic rather than its early-refresh margin.
    public var signInAccessTTL: Int?
    /// Refresh-token lifetime in seconds.
    public var refreshTTL: Int
    /// Each refresh returns a new refresh token and retires the presented one.
    public var rotateRefreshTokens: Bool
    /// Seconds during which a just-retired refresh token still works; 0 means
    /// any reuse is treated as theft (RFC 9700 section 4.14.2).
    public var reuseGraceSeconds: Int
    /// What presenting an already rotated refresh token after the grace does.
    public var refreshReuse: RefreshReuse = .revokeLogin
    /// What a rotated refresh token presented again gets while its successor is live.
    public var reusedParent: ReusedParent = .newChild
    /// What a refresh gets when another refresh of the same token was decided
    /// after it arrived (two at once): the reuse rules, or both succeed.
    public var concurrentRefresh: ConcurrentRefresh = .serialized
    /// A refresh revokes the access tokens its login was issued before it
    /// (a refresh grant that revokes the old access token), so a call
    /// still carrying one gets a 401.
    public var refreshRevokesAccess = false
    /// `iss` claim; also the base of the metadata URLs.
    public var issuer: String
    /// `aud` claim every access token carries and every resource requires.
    public var audience: String
    /// Authorization codes live this long (seconds).
    public var authorizationCodeTTL: Int
    /// Seconds past their end that token records are kept before pruning
    /// (TokenPruning.swift has the rules); 0 keeps everything (the runner's
    /// case servers, whose verdicts read every token of the case).
    public var pruneAfterSeconds: Int = 60
    /// How tokens are signed (`--signing-alg`, docs/oidc.md).
    public var signingAlgorithm: SigningAlgorithm = .hs256
    /// A refresh of an `openid` login returns a new id token (OIDC Core 12.2).
    public var idTokenOnRefresh = true
    /// Seconds a key retired by a rotation still verifies and stays in the JWKS.
    public var keyRotationGraceSeconds = 3600
    /// A dialect's JWTs where they differ from authmock's (`jwt:` in a dialect file).
    public var jwtShape = TokenShape()
    /// Which token resources take (`api_token`): the access token, or the
    /// id token issued beside it, as API Gateway's Cognito authorizer does
    /// on a method without OAuth scopes.
    public var resourceToken: ResourceToken = .access

    public init(
        accessTTL: Int = 300, refreshTTL: Int = 86_400, rotateRefreshTokens: Bool = true,
        reuseGraceSeconds: Int = 0, issuer: String = "http://127.0.0.1:8080",
        audience: String = "authmock-api", authorizationCodeTTL: Int = 60
    ) {
        self.accessTTL = accessTTL
        self.refreshTTL = refreshTTL
        self.rotateRefreshTokens = rotateRefreshTokens
        self.reuseGraceSeconds = reuseGraceSeconds
        self.issuer = issuer
        self.audience = audience
        self.authorizationCodeTTL = authorizationCodeTTL
    }

    /// The grace a rotated refresh token has: `reuseGraceSeconds`, or its
    /// whole life when rotated tokens stay valid (about 68 years: every
    /// store adds it to a timestamp).
    public var reuseGrace: Int { refreshReuse == .accept ? Int(Int32.max) : reuseGraceSeconds }

    /// Rejects settings the server cannot honour, with a sentence a person can act on.
    public func validate() throws(SettingsError) {
        guard accessTTL >= 1 else { throw SettingsError("access token lifetime must be at least 1 second, got \(accessTTL)") }
        if let signInAccessTTL, signInAccessTTL < 1 {
            throw SettingsError("sign-in access token lifetime must be at least 1 second, got \(signInAccessTTL)")
        }
        guard refreshTTL >= 1 else { throw SettingsError("refresh token lifetime must be at least 1 second, got \(refreshTTL)") }
        guard reuseGraceSeconds >= 0 else { throw SettingsError("refresh reuse grace must not be negative, got \(reuseGraceSeconds)") }
        guard authorizationCodeTTL >= 1 else { throw SettingsError("authorization code lifetime must be at least 1 second") }
        guard keyRotationGraceSeconds >= 0 else { throw SettingsError("key_grace must not be negative, got \(keyRotationGraceSeconds)") }
        guard pruneAfterSeconds >= 0 else {
            throw SettingsError("prune_after must be 0 (keep everything) or a number of seconds, got \(pruneAfterSeconds)")
        }
    }
}

public struct SettingsError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The rotation policies of real backends for a refresh token presented
/// again after it was rotated (and its grace, `reuse_grace`, ended).
public enum RefreshReuse: String, Sendable, CaseIterable {
    /// Refused as reused, and the whole login revoked (RFC 9700 section 4.14.2).
    case revokeLogin = "revoke_login"
    /// Refused as reused; the login and its newer tokens live on.
    case reject
    /// Exchanged again: a rotated token stays valid until it expires.
    case accept
}

/// What the second of two refreshes of one token at once gets: the request
/// arrived before the first was decided. Real backends differ by whether
/// they lock between checking a token and retiring it.
public enum ConcurrentRefresh: String, Sendable, CaseIterable {
    /// Decided one after the other: the second meets a rotated token and the
    /// reuse rules (`reuse_grace`, `reused_parent`, `refresh_reuse`) answer it.
    case serialized
    /// Both succeed, each with a new token pair, as a backend without a lock
    /// does (a blacklist checked, then written).
    case bothSucceed = "both_succeed"
}

/// What a rotated refresh token presented again gets while the token that
/// replaced it is still live: a client that lost the answer to its refresh
/// (a crash, a cancelled request) retries with the old token.
public enum ReusedParent: String, Sendable, CaseIterable {
    /// Within the grace a new refresh token; after it `refresh_reuse` decides.
    case newChild = "new_child"
    /// That same successor again, however late, until the old token expires
    /// (a reuse interval); a token whose successor was rotated or revoked
    /// in turn is treated as `new_child`.
    case currentChild = "current_child"
}

/// The token a resource takes in `Authorization: Bearer`.
public enum ResourceToken: String, Sendable, CaseIterable {
    /// The access token (OAuth 2.0, RFC 6750).
    case access
    /// The id token issued beside it; an access token is refused. The id
    /// token stands for its access token: it carries that token's `jti`, and
    /// expires, is revoked and grants scopes with it.
    case id
}
