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
