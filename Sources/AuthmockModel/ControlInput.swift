public import AuthmockCore
import DriverProtocol
import Foundation

/// Parsing of control operations' input from a strict object, shared by the
/// HTTP control API and scenario files (which write the same shapes in YAML).
extension TokenSelector {
    public static let fields = ["kind", "subject", "family", "jti"]

    public init(_ object: StrictObject) throws(ControlInputError) {
        try object.allow(Self.fields)
        let kindName = try object.string("kind") ?? "all"
        guard let kind = Kind(rawValue: kindName) else {
            throw ControlInputError(.invalidValue, "field '\(object.name("kind"))' must be one of access, refresh, all; got '\(kindName)'")
        }
        self.init(kind: kind, subject: try object.string("subject"), family: try object.string("family"), jti: try object.string("jti"))
    }
}

extension FaultRule {
    public static let fields = ["match", "times", "action"]
    public static let matchFields = ["method", "pathPrefix", "kind", "header"]
    /// The action types, as control API bodies and scenario files name them.
    public static let actionTypes = ["respond", "answer", "delay", "delay-response", "gather", "close-connection", "drop-response", "id-token"]

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
        switch type {
        case "respond":
            try action.allow(["type", "status", "headers", "body"])
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
        case "answer":
            // Which situations there are is the server's (AuthmockServer's `Situation`): it checks the name where a rule is installed or loaded.
            try action.allow(["type", "situation"])
            let situation = try action.required(try action.string("situation"), "situation")
            guard !situation.isEmpty else { throw ControlInputError(.invalidValue, "field '\(action.name("situation"))' must name a situation") }
            return .answer(situation: situation)
        case "delay", "delay-response":
            try action.allow(["type", "ms"])
            let ms = try action.required(try action.int("ms"), "ms")
            guard (0...60_000).contains(ms) else {
                throw ControlInputError(.invalidValue, "field '\(action.name("ms"))' must be 0 to 60000 milliseconds, got \(ms)")
            }
            return type == "delay" ? .delay(milliseconds: ms) : .delayResponse(milliseconds: ms)
        case "gather":
            try action.allow(["type", "count", "ms", "quiet_ms"])
            let count = try action.required(try action.int("count"), "count")
            guard count >= 1 else { throw ControlInputError(.invalidValue, "field '\(action.name("count"))' must be at least 1") }
            let ms = try action.int("ms") ?? 2_000
            let quiet = try action.int("quiet_ms") ?? FaultRule.defaultQuietMilliseconds
            for (key, value) in [("ms", ms), ("quiet_ms", quiet)] where !(0...60_000).contains(value) {
                throw ControlInputError(.invalidValue, "field '\(action.name(key))' must be 0 to 60000 milliseconds, got \(value)")
            }
            return .gather(count: count, milliseconds: ms, quietMilliseconds: quiet)
        case "id-token":
            try action.allow(["type", "claims"])
            let claims = try action.required(try action.stringMap("claims"), "claims")
            guard !claims.isEmpty else { throw ControlInputError(.invalidValue, "field '\(action.name("claims"))' must name at least one claim") }
            return .idToken(claims: claims)
        case "close-connection":
            try action.allow(["type"])
            return .closeConnection
        case "drop-response":
            try action.allow(["type"])
            return .dropResponse
        default:
            throw ControlInputError(
                .invalidValue,
                "field '\(action.name("type"))' must be one of \(Self.actionTypes.joined(separator: ", ")); got '\(type)'\(Suggestion.hint(for: type, in: Self.actionTypes))"
            )
        }
    }
}

// A fault rule's one wire shape, {match, times, action}: what the control API
// and scenario files take, and what the control API answers (with the rule's
// id and counts). Decoding is the strict parse above, so a rule decoded from
// JSON is refused for the same reasons, in the same words.
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

/// An installed fault rule in control API answers: the rule's own shape
/// plus its id and how often it fired.
public struct FaultRuleView: Codable, Sendable, Equatable {
    public var id: Int
    public var fired: Int
    public var exhausted: Bool
    public var rule: FaultRule

    private enum Keys: String, CodingKey { case id, fired, exhausted }

    public init(id: Int, fired: Int, exhausted: Bool, rule: FaultRule) {
        self.id = id
        self.fired = fired
        self.exhausted = exhausted
        self.rule = rule
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        id = try container.decode(Int.self, forKey: .id)
        fired = try container.decode(Int.self, forKey: .fired)
        exhausted = try container.decode(Bool.self, forKey: .exhausted)
        rule = try FaultRule(from: decoder, ignoring: ["id", "fired", "exhausted"])
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(id, forKey: .id)
        try container.encode(fired, forKey: .fired)
        try container.encode(exhausted, forKey: .exhausted)
        // The same object: the rule's keys beside the view's.
        try rule.encode(to: encoder)
    }
}

extension JournalFilter {
    /// From query parameters `kind` (comma-separated, `token` for login+refresh), `call`, `since`, `limit`.
    public init(query: [String: String]) throws(ControlInputError) {
        self.init()
        let known = ["kind", "call", "since", "limit"]
        for key in query.keys where !known.contains(key) {
            throw ControlInputError(
                .unknownField, "unknown query parameter '\(key)'\(Suggestion.hint(for: key, in: known)); expected \(known.joined(separator: ", "))")
        }
        if let limit = query["limit"] {
            guard let value = Int(limit), value >= 1 else {
                throw ControlInputError(.invalidValue, "limit must be a whole number >= 1, got '\(limit)'")
            }
            self.limit = value
        }
        if let kindList = query["kind"] {
            var kinds = Set<RouteKind>()
            for name in kindList.split(separator: ",").map(String.init) {
                guard let parsed = RouteKind.parseMatch(name) else {
                    throw ControlInputError(.invalidValue, "kind must be one of \(RouteKind.matchNames.joined(separator: ", ")); got '\(name)'")
                }
                kinds.formUnion(parsed)
            }
            self.kinds = kinds
        }
        call = query["call"]
        if let since = query["since"] {
            guard let value = Int(since), value >= 0 else {
                throw ControlInputError(.invalidValue, "since must be a sequence number >= 0, got '\(since)'")
            }
            self.since = value
        }
    }
}
