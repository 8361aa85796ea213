import AuthmockCore
import DriverProtocol
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

// A fault rule's one wire shape, {match, times, action}: what the control API
// and scenario files take, what the control API answers (with the rule's id
// and counts), what the scenario schema and docs/control-api.md say. Each
// action type is one row of `actions` (its name, fields, doc and reading)
// and one case of the encoding switch below: a new fault kind is written
// here and where the server carries it out (ObservationMiddleware).
extension FaultRule {
    public static let fields = ["match", "times", "action"]
    public static let matchFields = ["method", "pathPrefix", "kind", "header"]

    /// A field an action takes, for the scenario schema.
    public struct ActionField: Sendable {
        public enum Value: Sendable {
            case integer(minimum: Int)
            case string
            case stringMap
            /// A situation's key (the server's `Situation.answerableKeys`).
            case situation
        }

        public let name: String
        public let value: Value
        public let doc: String
    }

    /// An action type as bodies and files name it: the fields it takes besides
    /// `type`, its line in docs/control-api.md, and how its fields are read.
    public struct ActionType: Sendable {
        public let name: String
        public let fields: [String]
        public let doc: String
        let read: @Sendable (StrictObject) throws(ControlInputError) -> Action
    }

    /// Every field any action takes.
    public static let actionFields: [ActionField] = [
        ActionField(name: "status", value: .integer(minimum: 200), doc: "respond: the status (200 to 599; a 204 or 304 has no body)"),
        ActionField(name: "headers", value: .stringMap, doc: "respond: headers"),
        ActionField(name: "body", value: .string, doc: "respond: body"),
        ActionField(
            name: "situation", value: .situation,
            doc: "answer: the situation whose answer the served dialect gives (access_token_expired, ...): its own status, headers and body"),
        ActionField(
            name: "ms", value: .integer(minimum: 0),
            doc: "delay, delay-response: milliseconds of real time; gather: the longest hold after the first arrival (default 2000)"),
        ActionField(
            name: "quiet_ms", value: .integer(minimum: 0),
            doc: "gather: let the held requests go once no new one has arrived for this long (default 150)"),
        ActionField(name: "count", value: .integer(minimum: 1), doc: "gather: hold matching requests until this many have arrived"),
        ActionField(name: "claims", value: .stringMap, doc: "id-token: the claims the answer's id token says instead (sub, iss, nonce, aud, ...)"),
    ]

    /// The action types, in the order the docs list them.
    public static let actions: [ActionType] = [
        ActionType(
            name: "respond", fields: ["status", "headers", "body"],
            doc: "answer `status` with `headers` and `body` instead of the route (a 503 with `Retry-After`, a 401 for a perfectly good "
                + "token, ...); the status is a final one (200 to 599), a 204 or 304 has no body, and the server sets `Content-Length` "
                + "from the body (a rule may not)"
        ) { action throws(ControlInputError) in
            let status = try action.required(try action.int("status"), "status")
            // A 1xx is not a final answer; 204 and 304 have no body (RFC 9110 15.3.5, 15.4.5);
            // the server frames the body itself, so a rule's own framing would contradict it.
            guard (200...599).contains(status) else {
                throw ControlInputError(.invalidValue, "field '\(action.name("status"))' must be an HTTP status from 200 to 599, got \(status)")
            }
            let headers = try action.stringMap("headers") ?? [:]
            let body = try action.string("body")
            if [204, 304].contains(status), !(body ?? "").isEmpty {
                throw ControlInputError(.invalidValue, "field '\(action.name("body"))': a \(status) answer has no body")
            }
            if let framing = ServerSetHeaders.first(in: headers.keys) {
                throw ControlInputError(.invalidValue, "field '\(action.name("headers"))': \(framing) is set by the server from the body")
            }
            return .respond(status: status, headers: headers, body: body)
        },
        ActionType(
            name: "answer", fields: ["situation"],
            doc: "answer as the served dialect answers `situation` (a key of a dialect file's `errors.answers`: `access_token_expired`, "
                + "`refresh_token_revoked`, `insufficient_scope`, ...), with its own status, headers and body, and the journal notes the "
                + "situation: one rule means \"the API says this token expired\" to every dialect, whether it says so with a 401 and a "
                + "challenge, a `40101` in an envelope, or a `1001` in an HTTP 200 (`{\"type\": \"answer\", \"situation\": "
                + "\"access_token_expired\"}`); a name no dialect answers is refused with the list and a \"did you mean\""
        ) { action throws(ControlInputError) in
            // Which situations there are is the server's (AuthmockServer's `Situation`): it checks the name where a rule is installed or loaded.
            let situation = try action.required(try action.string("situation"), "situation")
            guard !situation.isEmpty else { throw ControlInputError(.invalidValue, "field '\(action.name("situation"))' must name a situation") }
            return .answer(situation: situation)
        },
        ActionType(
            name: "delay", fields: ["ms"],
            doc: "wait `ms` milliseconds of real time (0 to 60000), then answer normally (to hold a refresh in flight while other calls arrive)"
        ) { action throws(ControlInputError) in .delay(milliseconds: try milliseconds(action)) },
        ActionType(
            name: "gather", fields: ["count", "ms", "quiet_ms"],
            doc: "hold matching requests until `count` of them have arrived, or until none has arrived for `quiet_ms` (default 150), or "
                + "`ms` after the first one (default 2000), then answer them all normally: use it with `times` equal to `count` to make N "
                + "calls really meet one expired token together, however the client schedules them. The quiet period lets a client whose "
                + "connection pool queues the rest (URLSession's 6 per host) go after 150 ms instead of holding it until tokens issued "
                + "meanwhile expire; the next batch is gathered the same way"
        ) { action throws(ControlInputError) in
            let count = try action.required(try action.int("count"), "count")
            guard count >= 1 else { throw ControlInputError(.invalidValue, "field '\(action.name("count"))' must be at least 1") }
            let ms = try action.int("ms") ?? 2_000
            let quiet = try action.int("quiet_ms") ?? FaultRule.defaultQuietMilliseconds
            for (key, value) in [("ms", ms), ("quiet_ms", quiet)] where !(0...60_000).contains(value) {
                throw ControlInputError(.invalidValue, "field '\(action.name(key))' must be 0 to 60000 milliseconds, got \(value)")
            }
            return .gather(count: count, milliseconds: ms, quietMilliseconds: quiet)
        },
        ActionType(
            name: "delay-response", fields: ["ms"],
            doc: "answer normally at once (a rotation happens now) but hold the answer `ms` milliseconds, so answers reach the client out of order"
        ) { action throws(ControlInputError) in .delayResponse(milliseconds: try milliseconds(action)) },
        ActionType(name: "close-connection", fields: [], doc: "close the connection without any answer") { _ throws(ControlInputError) in
            .closeConnection
        },
        ActionType(
            name: "drop-response", fields: [],
            doc: "handle the request normally (a refresh rotates the tokens) and then close the connection instead of answering: the client "
                + "loses a response the server acted on"
        ) { _ throws(ControlInputError) in .dropResponse },
        ActionType(
            name: "id-token", fields: ["claims"],
            doc: "answer normally, but the answer's id token (OpenID Connect, [oidc.md](oidc.md)) says `claims` instead "
                + "(`{\"sub\": \"mallory\"}`, `{\"iss\": \"https://other.example\"}`, `{\"nonce\": \"...\"}`), validly signed by the server's "
                + "key: what a client must refuse by checking the claims, not the signature. Like `delay`, it passes the request on"
        ) { action throws(ControlInputError) in
            let claims = try action.required(try action.stringMap("claims"), "claims")
            guard !claims.isEmpty else { throw ControlInputError(.invalidValue, "field '\(action.name("claims"))' must name at least one claim") }
            return .idToken(claims: claims)
        },
    ]

    /// The action types' names, as control API bodies and scenario files write them.
    public static var actionTypes: [String] { actions.map(\.name) }

    /// docs/control-api.md's list of action types (`authmock schema --fault-actions`).
    public static func actionsMarkdown() -> String {
        actions.enumerated().map { "  - `\($1.name)`: \($1.doc)\($0 == actions.count - 1 ? "." : ";")\n" }.joined()
    }

    /// `ms`, 0 to 60000.
    private static func milliseconds(_ action: StrictObject) throws(ControlInputError) -> Int {
        let ms = try action.required(try action.int("ms"), "ms")
        guard (0...60_000).contains(ms) else {
            throw ControlInputError(.invalidValue, "field '\(action.name("ms"))' must be 0 to 60000 milliseconds, got \(ms)")
        }
        return ms
    }

    public init(_ object: StrictObject) throws(ControlInputError) {
        try object.allow(Self.fields)
        self.init(match: try Self.match(object), times: try Self.times(object), action: try Self.action(object))
    }

    /// `match`: which requests the rule is for (all, when absent).
    static func match(_ object: StrictObject) throws(ControlInputError) -> Match {
        var match = Match()
        if let m = try object.object("match") {
            try m.allow(Self.matchFields)
            match.method = try m.string("method")?.uppercased()
            match.pathPrefix = try m.string("pathPrefix")
            // One kind name, or a list of them (as answers write the kinds a rule matches).
            if let names = try m.strings("kind") {
                var kinds = Set<RouteKind>()
                for kind in names {
                    guard let parsed = RouteKind.parseMatch(kind) else {
                        throw ControlInputError(
                            .invalidValue,
                            "field '\(m.name("kind"))' must be one of \(RouteKind.matchNames.joined(separator: ", ")); got '\(kind)'\(Suggestion.hint(for: kind, in: RouteKind.matchNames))"
                        )
                    }
                    kinds.formUnion(parsed)
                }
                guard !kinds.isEmpty else { throw ControlInputError(.invalidValue, "field '\(m.name("kind"))' must name at least one kind") }
                match.kinds = kinds
            }
            if let header = try m.object("header") {
                try header.allow(["name", "value"])
                let name = try header.required(try header.string("name"), "name")
                match.header = (name, try header.string("value"))
            }
        }
        return match
    }

    /// `times`: how many matching requests the rule fires on (1 when absent; nil: unlimited).
    static func times(_ object: StrictObject) throws(ControlInputError) -> Int? {
        var times: Int? = 1
        if object.has("times") {
            if (try? object.string("times")) == "unlimited" {
                times = nil
            } else {
                guard let count = try? object.int("times"), count >= 1 else {
                    throw ControlInputError(.invalidValue, "field '\(object.name("times"))' must be a whole number >= 1 or \"unlimited\"")
                }
                times = count
            }
        }
        return times
    }

    /// `action`: what the rule does to a matching request, each type with its own fields.
    static func action(_ object: StrictObject) throws(ControlInputError) -> Action {
        let action = try object.required(try object.object("action"), "action")
        let type = try action.required(try action.string("type"), "type")
        guard let kind = actions.first(where: { $0.name == type }) else {
            throw ControlInputError(
                .invalidValue,
                "field '\(action.name("type"))' must be one of \(Self.actionTypes.joined(separator: ", ")); got '\(type)'\(Suggestion.hint(for: type, in: Self.actionTypes))"
            )
        }
        try action.allow(["type"] + kind.fields)
        return try kind.read(action)
    }
}

// Decoding is the strict parse above, so a rule decoded from JSON is refused
// for the same reasons, in the same words.
extension FaultRule: Codable {
    private enum Keys: String, CodingKey { case match, times, action }
    private struct WireMatch: Encodable {
        var method: String?, pathPrefix: String?, kind: [String]?, header: [String: String]?
    }
    private struct WireAction: Encodable {
        var type: String, status: Int? = nil, headers: [String: String]? = nil, body: String? = nil, ms: Int? = nil, count: Int? = nil
        var quiet_ms: Int? = nil
        var claims: [String: String]? = nil
        var situation: String? = nil
    }

    public init(from decoder: any Decoder) throws {
        try self.init(from: decoder, ignoring: [])
    }

    /// Decodes the rule from an object that also has `ignoring`'s keys (a view's id and counts).
    init(from decoder: any Decoder, ignoring: [String]) throws {
        let json = try JSONEncoder().encode(try JSONValue(from: decoder))
        guard var object = try JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw DecodingError.typeMismatch(FaultRule.self, .init(codingPath: decoder.codingPath, debugDescription: "a fault rule is an object"))
        }
        for key in ignoring { object[key] = nil }
        do {
            try self.init(StrictObject(object))
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        let header = match.header.map { ["name": $0.name].merging($0.value.map { ["value": $0] } ?? [:]) { a, _ in a } }
        try container.encode(
            WireMatch(method: match.method, pathPrefix: match.pathPrefix, kind: match.kinds?.map(\.rawValue).sorted(), header: header), forKey: .match
        )
        if let times { try container.encode(times, forKey: .times) } else { try container.encode("unlimited", forKey: .times) }
        let wire: WireAction =
            switch action {
            case .respond(let status, let headers, let body): WireAction(type: "respond", status: status, headers: headers, body: body)
            case .answer(let situation): WireAction(type: "answer", situation: situation)
            case .delay(let ms): WireAction(type: "delay", ms: ms)
            case .delayResponse(let ms): WireAction(type: "delay-response", ms: ms)
            case .gather(let count, let ms, let quiet): WireAction(type: "gather", ms: ms, count: count, quiet_ms: quiet)
            case .closeConnection: WireAction(type: "close-connection")
            case .dropResponse: WireAction(type: "drop-response")
            case .idToken(let claims): WireAction(type: "id-token", claims: claims)
            }
        try container.encode(wire, forKey: .action)
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
