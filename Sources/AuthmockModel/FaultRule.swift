import Foundation

/// A fault a test injects: which requests it hits, how often, and what the
/// server does instead of (or besides) answering normally.
public struct FaultRule: Sendable, Equatable {
    public struct Match: Sendable, Equatable {
        public var method: String?
        public var pathPrefix: String?
        public var kinds: Set<RouteKind>?
        /// A header that must be present; with a value, it must equal it.
        public var header: (name: String, value: String?)?

        public init(method: String? = nil, pathPrefix: String? = nil, kinds: Set<RouteKind>? = nil, header: (name: String, value: String?)? = nil) {
            self.method = method
            self.pathPrefix = pathPrefix
            self.kinds = kinds
            self.header = header
        }

        public static func == (a: Match, b: Match) -> Bool {
            a.method == b.method && a.pathPrefix == b.pathPrefix && a.kinds == b.kinds
                && a.header?.name == b.header?.name && a.header?.value == b.header?.value
        }
    }

    public enum Action: Sendable, Equatable {
        /// Answer this instead of the route (e.g. 503 with Retry-After, or 401 for a good token).
        case respond(status: Int, headers: [String: String], body: String?)
        /// Answer as the served dialect answers `situation` (a key of a dialect
        /// file's `errors.answers`: `access_token_expired`, ...), its status,
        /// headers and body, instead of the route: one rule for every dialect,
        /// whether it signals by status or by a code in a 200.
        case answer(situation: String)
        /// Wait this long (real time), then answer normally.
        case delay(milliseconds: Int)
        /// Answer normally at once (tokens rotate now) but hold the answer
        /// this long: answers then arrive in another order than they were made.
        case delayResponse(milliseconds: Int)
        /// Close the connection without any answer.
        case closeConnection
        /// Handle the request (tokens rotate), then close the connection
        /// instead of answering: the client loses the response.
        case dropResponse
        /// Hold matching requests until `count` of them have arrived, or no
        /// new one has arrived for `quietMilliseconds` (a client whose
        /// connection pool holds the rest back), or `milliseconds` after the
        /// first; then answer them all normally: concurrency made
        /// deterministic, so N calls really meet one expired token together,
        /// and a pool-limited client is held only a short quiet period.
        case gather(count: Int, milliseconds: Int, quietMilliseconds: Int)
        /// Answer normally, but the id token of the answer (OpenID Connect)
        /// says these claims instead (`sub`, `iss`, `nonce`, `aud`, ...),
        /// validly signed: the client must check what it says.
        case idToken(claims: [String: String])

        /// What it did to a request, as a journal line says it: `(fault 2: held 300 ms)`.
        public var did: String {
            switch self {
            case .respond(let status, _, _): "answered \(status) in the route's place"
            case .answer(let situation): "answered as the dialect answers \(situation), in the route's place"
            case .delay(let milliseconds): "held \(milliseconds) ms, then answered by the route"
            case .delayResponse(let milliseconds): "answer held \(milliseconds) ms"
            case .closeConnection: "connection closed, no answer"
            case .dropResponse: "handled, then the answer dropped"
            case .gather(let count, _, _): "held to meet \(count) requests together"
            case .idToken: "id token replaced"
            }
        }

        /// What it did to a request when its rule was removed later (a
        /// `clear_faults` step): a hold may have ended then, before its time.
        public var didUntilCleared: String {
            switch self {
            case .delay(let milliseconds):
                "held until the case cleared its faults or \(milliseconds) ms, whichever came first, then answered by the route"
            case .delayResponse(let milliseconds): "answer held until the case cleared its faults or \(milliseconds) ms, whichever came first"
            default: did
            }
        }

        /// Holding actions wait (or mark the answer) and then pass the request on: a later rule
        /// that matches may act on it too (gather, then delay one call).
        public var holds: Bool {
            switch self {
            case .delay, .gather, .idToken: true
            default: false
            }
        }
    }

    public var match: Match
    /// nil: fires on every matching request.
    public var times: Int?
    public var action: Action

    /// How long a gather waits for another arrival before it lets the held
    /// requests go: long enough for any client to put its concurrent calls
    /// on the wire, short enough that no token of a case expires meanwhile.
    public static let defaultQuietMilliseconds = 150

    public init(match: Match = Match(), times: Int? = 1, action: Action) {
        self.match = match
        self.times = times
        self.action = action
    }
}

/// Headers the server writes from the answer it frames: a fault rule's or a
/// dialect's own would contradict the body (a `Content-Length` of another
/// length) or the connection (RFC 9110 section 7.6.1: hop-by-hop fields).
public enum ServerSetHeaders {
    public static let names: Set<String> = [
        "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer", "proxy-connection",
    ]

    /// The first of `headers` the server sets itself, if any.
    public static func first(in headers: some Sequence<String>) -> String? { headers.first { names.contains($0.lowercased()) } }
}
