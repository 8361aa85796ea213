import Foundation
public import AuthmockCore
import DriverProtocol

/// One server setting, declared once. Its flag (`--access-ttl`), environment
/// variable (`AUTHMOCK_ACCESS_TTL`), config-file key and scenario `server:`
/// key (`access_ttl`), its type, default and doc line all come from here:
/// `authmock serve` parses its flags and environment with it, the config
/// file and the scenario loader read their keys with it, and the docs'
/// settings tables and the scenario schema are generated from it. Adding a
/// setting is one entry here plus the behaviour it switches.
public struct ServerSetting: Sendable {
    public enum ValueType: Sendable, Equatable {
        case integer(minimum: Int)
        case boolean
        case string
        case choice([String])
    }

    /// The config-file and scenario key.
    public let key: String
    public let type: ValueType
    /// The default as the docs show it.
    public let defaultText: String
    public let doc: String
    /// Whether a scenario may set it in `server:` (address and limits are the runner's).
    public let inScenarios: Bool
    /// A trait of the backend a dialect file models rather than a condition a
    /// case sets up: case servers of `authmock run` take it from the
    /// dialect's `settings` too (a case's own `server:` still wins). An
    /// SDK that verifies its backend's RS256 tokens needs them in every case.
    public var backendTrait = false
    let apply: @Sendable (inout ServerOptions, SettingValue) -> Void

    public var flag: String { "--" + key.replacingOccurrences(of: "_", with: "-") }
    public var environmentVariable: String { "AUTHMOCK_" + key.uppercased() }

    /// Reads a value given as text (a flag or an environment variable).
    public func parse(_ text: String, from source: String) throws(SettingsError) -> SettingValue {
        switch type {
        case .integer:
            guard let value = Int(text) else { throw SettingsError("\(source) must be a whole number, got '\(text)'") }
            return try check(.integer(value), from: source)
        case .boolean:
            guard let value = Bool(text.lowercased()) else { throw SettingsError("\(source) must be true or false, got '\(text)'") }
            return .boolean(value)
        case .string:
            return .string(text)
        case .choice(let allowed):
            guard allowed.contains(text) else {
                throw SettingsError(
                    "\(source) must be one of \(allowed.joined(separator: ", ")), got '\(text)'\(Suggestion.hint(for: text, in: allowed))")
            }
            return .string(text)
        }
    }

    /// Checks a value that arrived typed (a config file or a scenario).
    public func check(_ value: SettingValue, from source: String) throws(SettingsError) -> SettingValue {
        switch (type, value) {
        case (.integer(let minimum), .integer(let number)):
            guard number >= minimum else { throw SettingsError("\(source) must be at least \(minimum), got \(number)") }
            guard number <= maximum else { throw SettingsError("\(source) must be at most \(maximum), got \(number)") }
        case (.boolean, .boolean), (.string, .string): break
        case (.choice(let allowed), .string(let text)):
            guard allowed.contains(text) else { throw SettingsError("\(source) must be one of \(allowed.joined(separator: ", ")), got '\(text)'") }
        default:
            throw SettingsError("\(source) must be \(typeText)")
        }
        return value
    }

    /// How `--help` names the value.
    public var typeName: String {
        switch type {
        case .integer: "n"
        case .boolean: "bool"
        case .string: "text"
        case .choice: "name"
        }
    }

    public var typeText: String {
        switch type {
        case .integer(let minimum): "a whole number from \(minimum) to \(maximum)"
        case .boolean: "true or false"
        case .string: "a string"
        case .choice(let allowed): "one of " + allowed.joined(separator: ", ")
        }
    }

    public func apply(_ value: SettingValue, to options: inout ServerOptions) { apply(&options, value) }

    /// The largest whole number a setting takes: a port's 65535, or about
    /// 316 years of seconds for the rest, so that no lifetime, grace or
    /// limit overflows a date or a 64-bit count (a lifetime of Int64.max
    /// trapped at the first sign-in).
    public var maximum: Int { key == "port" ? 65_535 : Self.largestNumber }
    public static let largestNumber = 10_000_000_000
}

/// A setting's value, as typed as its source allows.
public enum SettingValue: Sendable, Equatable {
    case integer(Int)
    case boolean(Bool)
    case string(String)

    /// As a flag would give it.
    public var text: String {
        switch self {
        case .integer(let value): String(value)
        case .boolean(let value): String(value)
        case .string(let value): value
        }
    }

    var integer: Int { if case .integer(let value) = self { value } else { 0 } }
    var boolean: Bool { if case .boolean(let value) = self { value } else { false } }
    var string: String { if case .string(let value) = self { value } else { "" } }
}

extension ServerSetting {
    /// Every setting, in the order the docs list them.
    public static let all: [ServerSetting] = [
        .init(key: "host", type: .string, defaultText: "127.0.0.1", doc: "address to listen on", inScenarios: false) { $0.host = $1.string },
        .init(key: "port", type: .integer(minimum: 0), defaultText: "8080", doc: "port; 0 picks a free one (printed at start)", inScenarios: false) {
            $0.port = $1.integer
        },
        .init(
            key: "profile", type: .choice(Dialects.names), defaultText: "oauth2",
            doc: "the same as --dialect NAME: the built-in dialect served (docs/dialects/), the word earlier versions used", inScenarios: false
        ) {
            $0.profile = $1.string
        },
        .init(key: "access_ttl", type: .integer(minimum: 1), defaultText: "300", doc: "access-token lifetime in seconds", inScenarios: true) {
            $0.tokens.accessTTL = $1.integer
        },
        .init(
            key: "sign_in_access_ttl", type: .integer(minimum: 1), defaultText: "access_ttl",
            doc: "lifetime of the access token issued at sign-in, when it should differ (a short first token, long-lived refreshed ones)",
            inScenarios: true
        ) { $0.tokens.signInAccessTTL = $1.integer },
        .init(key: "refresh_ttl", type: .integer(minimum: 1), defaultText: "86400", doc: "refresh-token lifetime in seconds", inScenarios: true) {
            $0.tokens.refreshTTL = $1.integer
        },
        .init(key: "rotate_refresh", type: .boolean, defaultText: "true", doc: "a new refresh token on every refresh", inScenarios: true) {
            $0.tokens.rotateRefreshTokens = $1.boolean
        },
        .init(
            key: "reuse_grace", type: .integer(minimum: 0), defaultText: "0",
            doc: "seconds a just-rotated refresh token still works (0: none; after it, `refresh_reuse` decides)", inScenarios: true
        ) { $0.tokens.reuseGraceSeconds = $1.integer },
        .init(
            key: "refresh_reuse", type: .choice(RefreshReuse.allCases.map(\.rawValue)), defaultText: "revoke_login",
            doc:
                "a rotated refresh token presented after the grace: revoke_login (refused, the login revoked), "
                + "reject (refused, the login lives on) or accept (exchanged again: rotated tokens stay valid)",
            inScenarios: true
        ) { $0.tokens.refreshReuse = RefreshReuse(rawValue: $1.string) ?? .revokeLogin },
        .init(
            key: "reused_parent", type: .choice(ReusedParent.allCases.map(\.rawValue)), defaultText: "new_child",
            doc:
                "a rotated refresh token presented again while its successor is live: new_child (within `reuse_grace` a new refresh token, "
                + "after it `refresh_reuse` decides) or current_child (that same successor again, however late)",
            inScenarios: true
        ) { $0.tokens.reusedParent = ReusedParent(rawValue: $1.string) ?? .newChild },
        .init(
            key: "concurrent_refresh", type: .choice(ConcurrentRefresh.allCases.map(\.rawValue)), defaultText: "serialized",
            doc:
                "two refreshes of one token at once (the second arrived before the first was decided): serialized (the second meets "
                + "the reuse rules) or both_succeed (each gets a new pair: a backend without a lock between its check and its write)",
            inScenarios: true
        ) { $0.tokens.concurrentRefresh = ConcurrentRefresh(rawValue: $1.string) ?? .serialized },
        .init(
            key: "refresh_revokes_access", type: .boolean, defaultText: "false",
            doc: "a refresh revokes the access tokens its login was issued before it: a call still carrying one gets a 401",
            inScenarios: true, backendTrait: true
        ) { $0.tokens.refreshRevokesAccess = $1.boolean },
        .init(
            key: "signing_alg", type: .choice(SigningAlgorithm.allCases.map(\.rawValue)), defaultText: "HS256",
            doc:
                "how access and id tokens are signed: HS256 with the shared key, or RS256/ES256 with a key pair published at /oauth/jwks (docs/oidc.md)",
            inScenarios: true, backendTrait: true
        ) { $0.tokens.signingAlgorithm = SigningAlgorithm(rawValue: $1.string) ?? .hs256 },
        .init(
            key: "id_token_on_refresh", type: .boolean, defaultText: "true",
            doc: "a refresh of an `openid` login returns a new id token (OIDC Core 12.2)", inScenarios: true
        ) { $0.tokens.idTokenOnRefresh = $1.boolean },
        .init(
            key: "key_grace", type: .integer(minimum: 0), defaultText: "3600",
            doc: "seconds a key retired by `POST /_authmock/keys/rotate` still verifies and stays in the JWKS (server clock)", inScenarios: true
        ) { $0.tokens.keyRotationGraceSeconds = $1.integer },
        .init(key: "audience", type: .string, defaultText: "authmock-api", doc: "`aud` of access tokens, required by /api/", inScenarios: false) {
            $0.tokens.audience = $1.string
        },
        .init(
            key: "public_url", type: .string, defaultText: "derived",
            doc: "base URL clients see (issuer, metadata) behind a proxy or port mapping", inScenarios: false
        ) { $0.publicURL = $1.string },
        .init(
            key: "max_body", type: .integer(minimum: 1024), defaultText: "65536",
            doc: "largest request body read in bytes (larger: 413; at a proxy, one with a Content-Length goes to the backend unread)",
            inScenarios: false
        ) {
            $0.maxBodyBytes = $1.integer
        },
        .init(
            key: "idle_timeout", type: .integer(minimum: 1), defaultText: "60",
            doc: "seconds a keep-alive connection may wait between requests before it is closed", inScenarios: false
        ) { $0.idleTimeoutSeconds = $1.integer },
        .init(
            key: "request_read_timeout", type: .integer(minimum: 1), defaultText: "10",
            doc:
                "seconds a request's head or body may stall (no bytes arriving), or an answer (the client reading none of it), "
                + "before the connection is closed",
            inScenarios: false
        ) { $0.requestReadTimeoutSeconds = $1.integer },
        .init(
            key: "drain", type: .integer(minimum: 0), defaultText: "10",
            doc: "seconds SIGTERM/SIGINT waits for requests in flight before closing every connection and exiting", inScenarios: false
        ) { $0.drainSeconds = $1.integer },
        .init(
            key: "state", type: .string, defaultText: "memory",
            doc:
                "where token state lives: `memory`, `sqlite:PATH` (kept across restarts) or `postgres://USER@HOST:PORT/DB` (shared by replicas); docs/state.md",
            inScenarios: false
        ) { $0.state = $1.string },
        .init(
            key: "prune_after", type: .integer(minimum: 0), defaultText: "60",
            doc: "seconds past their end that token records are kept before pruning (docs/configuration.md#pruning); 0 keeps everything",
            inScenarios: false
        ) { $0.tokens.pruneAfterSeconds = $1.integer },
        .init(
            key: "journal_max_bytes", type: .integer(minimum: 65_536), defaultText: "33554432",
            doc:
                "the journal's memory bound in bytes (its ring of entry slots and their strings), beside journal_limit entries: the oldest entries go first",
            inScenarios: false
        ) { $0.journalMaxBytes = $1.integer },
        .init(
            key: "journal_limit", type: .integer(minimum: 1), defaultText: "100000",
            doc: "most requests the journal keeps; older ones are dropped and counted", inScenarios: false
        ) { $0.journalLimit = $1.integer },
        .init(
            key: "oauth2_errors", type: .choice(OAuth2ErrorStyle.allCases.map(\.rawValue)), defaultText: "strict",
            doc: "oauth2 dialect: strict, or rfc-lax (vendor-style error mistakes)", inScenarios: true
        ) { $0.dialectOptions.oauth2Errors = OAuth2ErrorStyle(rawValue: $1.string) ?? .strict },
        .init(
            key: "unknown_user", type: .choice(UnknownUser.allCases.map(\.rawValue)), defaultText: "hide",
            doc:
                "a sign-in with a user name no user has: hide (answered as a wrong password) or reveal (the dialect's `user_unknown` "
                + "answer where it has one)",
            inScenarios: true, backendTrait: true
        ) { $0.dialectOptions.unknownUser = UnknownUser(rawValue: $1.string) ?? .hide },
        .init(
            key: "api_token", type: .choice(ResourceToken.allCases.map(\.rawValue)), defaultText: "access",
            doc:
                "the token resources take as Bearer: access, or id (the id token issued beside it, as API Gateway's Cognito authorizer on a "
                + "method without OAuth scopes; the access token is then refused, and the id token expires and is revoked with its access token; "
                + "for logins that get an id token: a dialect with `jwt.id_token_claims`, or an `openid` sign-in)",
            inScenarios: false
        ) { $0.tokens.resourceToken = ResourceToken(rawValue: $1.string) ?? .access },
        .init(
            key: "rotation_header", type: .string, defaultText: "the dialect's (Authorization)",
            doc: "a refresh `via: resources`: the response header carrying a new access token", inScenarios: true
        ) { $0.dialectOptions.rotationHeader = $1.string },
        .init(
            key: "rotate_every", type: .integer(minimum: 1), defaultText: "off",
            doc: "a refresh `via: resources`: rotate the access token on every Nth successful answer", inScenarios: true
        ) { $0.dialectOptions.rotateEvery = $1.integer },
        .init(
            key: "rotation_grace", type: .integer(minimum: 0), defaultText: "0",
            doc: "a refresh `via: resources`: seconds a rotated-away access token still works", inScenarios: true
        ) { $0.dialectOptions.rotationGraceSeconds = $1.integer },
        .init(
            key: "refresh_failure_status", type: .integer(minimum: 400), defaultText: "the dialect's",
            doc: "a dialect served from a file: the status of every refused refresh (4xx), in place of the file's", inScenarios: true
        ) { $0.dialectOptions.refreshFailureStatus = $1.integer },
        .init(
            key: "graphql_auth_errors", type: .choice(GraphQLAuthErrors.allCases.map(\.rawValue)), defaultText: "http",
            doc:
                "/graphql: a refused token answers the dialect's 401/403 (http), or 200 with UNAUTHENTICATED/FORBIDDEN in `errors` (body, Apollo Server's convention)",
            inScenarios: true
        ) { $0.graphQLAuthErrors = GraphQLAuthErrors(rawValue: $1.string) ?? .http },
        .init(
            key: "cors_origin", type: .string, defaultText: "off",
            doc:
                "browser origins allowed to call the token endpoint, /api/ and /graphql: `*`, or a comma-separated list of origins (docs/configuration.md#browsers)",
            inScenarios: false
        ) { $0.corsOrigin = $1.string },
    ]

    public static func named(_ key: String) -> ServerSetting? { all.first { $0.key == key } }
    public static func flagged(_ flag: String) -> ServerSetting? { all.first { $0.flag == flag } }

    /// The Markdown table the docs embed (README, docs/configuration.md).
    public static func markdownTable() -> String {
        var out = "| flag | environment | config and scenario key | default | meaning |\n| --- | --- | --- | --- | --- |\n"
        for setting in all {
            let key = "`\(setting.key)`" + (setting.inScenarios ? "" : " (not in scenarios)")
            out += "| `\(setting.flag)` | `\(setting.environmentVariable)` | \(key) | `\(setting.defaultText)` | \(setting.doc) |\n"
        }
        return out
    }
}
