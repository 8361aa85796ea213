package import AuthmockCore
public import Foundation

/// What a request presented as a credential, and its state at arrival.
public struct PresentedToken: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable { case access, refresh }

    /// A token's state as the journal names it: `valid`, or the failure the
    /// token core found (`expired`, `revoked`, `rotated-reuse`,
    /// `wrong-signature`, ...; derived from the failure enums, so the list
    /// cannot drift). Encoded as the plain string.
    public struct State: RawRepresentable, Sendable, Codable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }
        public var description: String { rawValue }

        public static let valid: State = "valid"
        public static let unknown: State = "unknown"
        /// A rotated refresh token presented past the grace window: the family is revoked.
        public static let rotatedReuse: State = "rotated-reuse"
        /// A rotated refresh token presented inside the grace window: accepted.
        public static let rotatedGrace: State = "rotated-grace"
        /// One of the server's access tokens, presented where a refresh token goes.
        public static let accessToken: State = "access-token"
    }

    public var kind: Kind
    /// The access token's `jti` or the refresh token's id; nil when unreadable.
    public var id: String? {
        get { storedID?.text }
        set { storedID = newValue.map(TokenID.init) }
    }
    public var state: State
    private var storedID: TokenID?

    public init(kind: Kind, id: String?, state: State) {
        self.kind = kind
        self.storedID = id.map(TokenID.init)
        self.state = state
    }

    package init(kind: Kind, key: TokenID, state: State) {
        self.kind = kind
        self.storedID = key
        self.state = state
    }

    private enum CodingKeys: String, CodingKey {
        case kind, storedID = "id", state
    }

    package var heapBytes: Int { storedID?.heapBytes ?? 0 }
}

/// One request to a non-control route, as the server saw it.
public struct JournalEntry: Sendable, Codable, Equatable {
    /// Assigned on arrival: the order requests reached the server.
    public var seq: Int
    /// Server (virtual) clock at arrival.
    public var virtualTime: Date
    /// Wall clock at arrival.
    public var realTime: Date
    public var method: String
    public var path: String
    /// The `Host` the client addressed (tells the server's own name from another).
    public var host: String?
    public var kind: RouteKind
    /// `Authorization` scheme as sent: Bearer, Basic, none, or what else was there.
    public var scheme: String
    /// `scheme` when the request had no Authorization header.
    public static let noScheme = "none"
    /// The request carried `Authorization: Bearer ...`.
    public var presentsBearer: Bool { scheme == "Bearer" }
    /// The request carried an Authorization header of any scheme.
    public var presentsAuthorization: Bool { scheme != Self.noScheme }
    /// The answer told the client its credentials were refused: a 401,
    /// `UNAUTHENTICATED` in a GraphQL body (`graphql_auth_errors: body`), or
    /// the dialect's refusal of an access token sent with a 2xx status (a
    /// backend that answers errors with HTTP 200 and a code).
    public var refusedCredentials: Bool {
        status == 401 || status == 200 && errorCode == Self.graphQLUnauthenticated
            || answeredErrorIn2xx && situation.map(Self.credentialRefusals.contains) == true
    }

    /// The answer said the token is good but not for this: a 403, or the
    /// dialect's `insufficient_scope` sent with a 2xx status.
    public var forbidden: Bool { status == 403 || answeredErrorIn2xx && situation == "insufficient_scope" }

    /// The answer was an error: no answer (0), a status outside 2xx, or one
    /// of the dialect's error answers sent with a 2xx status.
    public var failed: Bool { !(200..<300).contains(status) || situation != nil }

    /// One of the dialect's error answers, sent with a 2xx status: the error
    /// is in the body's code only.
    public var answeredErrorIn2xx: Bool { (200..<300).contains(status) && situation != nil }

    /// A token-endpoint answer that refused what the request presented: a
    /// 4xx other than 429 (which says "later"), credentials refused, or a
    /// 2xx error answer other than the server's own failure. A 5xx, a 429 or
    /// a reset refuses nothing.
    public var refused: Bool {
        guard !undelivered else { return false }
        if answeredErrorIn2xx { return !Self.serverFailures.contains(situation ?? "") }
        return (400..<500).contains(status) && status != 429 || refusedCredentials
    }

    /// The situations (docs/dialects.md's keys) that refuse an access token
    /// at a resource; `insufficient_scope` is a 403's business, not a refusal
    /// of the token. A test ties the list to the server's situations.
    public static let credentialRefusals: Set<String> = [
        "access_token_missing", "access_token_malformed", "access_token_wrong_algorithm", "access_token_bad_signature",
        "access_token_wrong_audience", "access_token_wrong_issuer", "access_token_not_yet_valid", "access_token_expired",
        "access_token_revoked", "refresh_token_as_access_token",
    ]
    /// Situations that are the server's failure, not a refusal: retrying may work.
    public static let serverFailures: Set<String> = ["store_unavailable", "internal_error"]
    /// The GraphQL error code of a refused credential (`GraphQLAPIError.unauthenticated`).
    package static let graphQLUnauthenticated = "UNAUTHENTICATED"
    /// The Bearer token, when one was sent.
    public var accessToken: PresentedToken?
    /// The refresh token, when the request presented one.
    public var refreshToken: PresentedToken?
    public var grantType: String?
    /// The `X-Authmock-Call` header: which application call this attempt belongs to.
    public var call: String?
    /// A GraphQL request's operation: `query Items`, `mutation CreateNote`.
    public var operation: String? = nil
    /// GraphQL mutations the request applied (nil: not a mutation, or refused before running).
    public var mutationsApplied: Int? = nil
    /// SHA-256 of the body, hex; nil for no body.
    public var bodySHA256: String? {
        get { bodyDigest?.text }
        set { bodyDigest = newValue.map(BodyDigest.init) }
    }
    package var bodyDigest: BodyDigest?
    public var bodyBytes: Int
    /// 0 when the connection was closed without an answer.
    public var status: Int
    public var errorCode: String?
    /// Which of the dialect's error answers the server gave
    /// (`access_token_expired`, `refresh_token_reused`: the keys of
    /// docs/dialects.md), whatever its status; nil for a success, and for
    /// oauth2's grant errors and GraphQL's, which `errorCode` names.
    public var situation: String? = nil
    /// Tokens the answer handed out: access `jti` and refresh id.
    public var issuedAccess: String? {
        get { issuedAccessID?.text }
        set { issuedAccessID = newValue.map(TokenID.init) }
    }
    public var issuedRefresh: String? {
        get { issuedRefreshID?.text }
        set { issuedRefreshID = newValue.map(TokenID.init) }
    }
    package var issuedAccessID: TokenID?
    package var issuedRefreshID: TokenID?
    /// The fault rule that fired, if any.
    public var fault: Int?
    /// True when the client never received the answer (closed or dropped connection).
    public var undelivered: Bool
    public var durationMs: Double

    public init(
        seq: Int, virtualTime: Date, realTime: Date, method: String, path: String, host: String?, kind: RouteKind, scheme: String,
        accessToken: PresentedToken? = nil, refreshToken: PresentedToken? = nil, grantType: String? = nil, call: String? = nil,
        operation: String? = nil, mutationsApplied: Int? = nil, bodySHA256: String? = nil, bodyBytes: Int, status: Int,
        errorCode: String? = nil, issuedAccess: String? = nil, issuedRefresh: String? = nil, fault: Int? = nil,
        undelivered: Bool, durationMs: Double
    ) {
        self.seq = seq
        self.virtualTime = virtualTime
        self.realTime = realTime
        self.method = method
        self.path = path
        self.host = host
        self.kind = kind
        self.scheme = scheme
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.grantType = grantType
        self.call = call
        self.operation = operation
        self.mutationsApplied = mutationsApplied
        self.bodyDigest = bodySHA256.map(BodyDigest.init)
        self.bodyBytes = bodyBytes
        self.status = status
        self.errorCode = errorCode
        self.issuedAccessID = issuedAccess.map(TokenID.init)
        self.issuedRefreshID = issuedRefresh.map(TokenID.init)
        self.fault = fault
        self.undelivered = undelivered
        self.durationMs = durationMs
    }

    private enum CodingKeys: String, CodingKey {
        case seq, virtualTime, realTime, method, path, host, kind, scheme, accessToken, refreshToken, grantType, call, operation
        case mutationsApplied, bodyDigest = "bodySHA256", bodyBytes, status, errorCode, situation
        case issuedAccessID = "issuedAccess", issuedRefreshID = "issuedRefresh", fault, undelivered, durationMs
    }
}

/// Filters of `GET /_authmock/journal` and the runner's queries.
public struct JournalFilter: Sendable, Equatable {
    public var kinds: Set<RouteKind>?
    public var call: String?
    /// Only entries with `seq` greater than this.
    public var since: Int?
    /// At most this many entries, the oldest that match (a page: the next
    /// one starts at `since` = the last `seq`). Counts refuse it.
    public var limit: Int?
    /// Only entries with `seq` up to this (a streamed answer ends where the
    /// journal stood when it began, however fast requests keep coming).
    package var through: Int?

    public init(kinds: Set<RouteKind>? = nil, call: String? = nil, since: Int? = nil, limit: Int? = nil) {
        self.kinds = kinds
        self.call = call
        self.since = since
        self.limit = limit
    }

    package func admits(_ entry: JournalEntry) -> Bool {
        (kinds == nil || kinds!.contains(entry.kind)) && (call == nil || entry.call == call) && (since == nil || entry.seq > since!)
            && (through == nil || entry.seq <= through!)
    }
}
