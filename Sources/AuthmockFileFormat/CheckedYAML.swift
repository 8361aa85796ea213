import AuthmockCore
import AuthmockServer
import Foundation
public import Yams

/// A YAML value after validation, still carrying where it was written.
public indirect enum SpecValue: Sendable {
    case string(String, Mark?)
    case integer(Int, Mark?)
    case number(Double, Mark?)
    case boolean(Bool, Mark?)
    case object([String: SpecValue], Mark?)
    case array([SpecValue], Mark?)
    /// YAML's null, kept only where a shape takes any value (a template).
    case null(Mark?)

    public var mark: Mark? {
        switch self {
        case .string(_, let m), .integer(_, let m), .number(_, let m), .boolean(_, let m), .object(_, let m), .array(_, let m), .null(let m): m
        }
    }
    package var string: String? { if case .string(let s, _) = self { return s }; return nil }
    package var integer: Int? { if case .integer(let i, _) = self { return i }; return nil }
    package var number: Double? {
        switch self {
        case .number(let d, _): return d
        case .integer(let i, _): return Double(i)
        default: return nil
        }
    }
    package var boolean: Bool? { if case .boolean(let b, _) = self { return b }; return nil }
    package var object: [String: SpecValue]? { if case .object(let o, _) = self { return o }; return nil }
    package var array: [SpecValue]? { if case .array(let a, _) = self { return a }; return nil }

    /// Plain Foundation values (for the control API's parsers).
    package var plainObject: [String: Any] { object?.mapValues(\.plain) ?? [:] }

    package var plain: Any {
        switch self {
        case .string(let s, _): s
        case .integer(let i, _): i
        case .number(let d, _): d
        case .boolean(let b, _): b
        case .object(let o, _): o.mapValues(\.plain)
        case .array(let a, _): a.map(\.plain)
        case .null: NSNull()
        }
    }
}

/// Checked access for the builder: the checker has matched the tree against
/// the format already, so a miss here means the format table and the builder
/// disagree. It is reported at the value's place, never a crash.
extension SpecValue {
    package func object(_ checker: SpecChecker, _ what: String) throws(ScenarioError) -> [String: SpecValue] {
        guard let object else { throw checker.error(at: mark, "\(what): expected a mapping") }
        return object
    }

    package func array(_ checker: SpecChecker, _ what: String) throws(ScenarioError) -> [SpecValue] {
        guard let array else { throw checker.error(at: mark, "\(what): expected a list") }
        return array
    }

    package func string(_ checker: SpecChecker, _ what: String) throws(ScenarioError) -> String {
        guard let string else { throw checker.error(at: mark, "\(what): expected a string") }
        return string
    }

    package func integer(_ checker: SpecChecker, _ what: String) throws(ScenarioError) -> Int {
        guard let integer else { throw checker.error(at: mark, "\(what): expected a whole number") }
        return integer
    }

    package func number(_ checker: SpecChecker, _ what: String) throws(ScenarioError) -> Double {
        guard let number else { throw checker.error(at: mark, "\(what): expected a number") }
        return number
    }
}

extension Dictionary where Key == String, Value == SpecValue {
    package func required(_ key: String, _ checker: SpecChecker, at mark: Mark?) throws(ScenarioError) -> SpecValue {
        guard let value = self[key] else { throw checker.error(at: mark, "missing required key '\(key)'") }
        return value
    }
}

/// The shape a value must have. The decoder checks YAML against these, and
/// the JSON Schema is generated from the same tables, so they cannot drift.
public indirect enum Shape: Sendable {
    case string(oneOf: [String]? = nil)
    case integer(minimum: Int? = nil)
    case number(minimum: Double? = nil)
    case boolean
    /// Seconds as a number, or a string like `90s`, `5m`, `1h`.
    case duration
    /// A whole number, or `all`.
    case countOrAll
    case object(ObjectSpec)
    case array(Shape)
    /// An object of free keys with values of one shape (headers, outcome counts).
    case map(Shape, keys: [String]? = nil)
    /// The first alternative the value fits.
    case oneOf([Shape])
    /// An object with exactly one of the given keys (a step).
    case choice([Field])
    /// Any YAML value, kept as it is written (a dialect file's answer templates).
    case any
    /// A dialect: a built-in one, or a declared dialect's name (lower-case
    /// letters, digits, dashes) that is no near miss of a built-in one.
    case profile
}

public struct Field: Sendable {
    public let name: String
    public let shape: Shape
    public let required: Bool
    public let doc: String

    public init(_ name: String, _ shape: Shape, required: Bool = false, _ doc: String) {
        self.name = name
        self.shape = shape
        self.required = required
        self.doc = doc
    }
}

public struct ObjectSpec: Sendable {
    public let name: String
    public let fields: [Field]

    public init(_ name: String, _ fields: [Field]) {
        self.name = name
        self.fields = fields
    }
}

/// A problem in a scenario file, at a place in it.
public struct ScenarioError: Error, CustomStringConvertible, Equatable {
    public let file: String
    public let line: Int
    public let column: Int
    public let message: String

    public var description: String { "\(file):\(line):\(column): \(message)" }

    public init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }
}

/// Problems found so far in one file: checking goes on past the first, so
/// `authmock validate` can report every one of them in a single pass.
package final class ProblemList: @unchecked Sendable {
    package private(set) var problems: [ScenarioError] = []
    package func add(_ problem: ScenarioError) { problems.append(problem) }
}

/// Checks YAML nodes against shapes. A problem inside a mapping or a list is
/// recorded and checking goes on with the next key or item; the value comes
/// back without the bad part, and the caller looks at `problems`.
package struct SpecChecker {
    package let file: String
    package var found = ProblemList()

    package init(file: String) {
        self.file = file
    }

    /// Checks a child, recording its problem instead of stopping.
    private func checkChild(_ node: Node, _ shape: Shape, _ path: String) -> SpecValue? {
        do {
            return try check(node, shape, path)
        } catch {
            found.add(error)
            return nil
        }
    }

    package func error(_ node: Node?, _ message: String) -> ScenarioError {
        ScenarioError(file: file, line: node?.mark?.line ?? 1, column: node?.mark?.column ?? 1, message: message)
    }

    package func error(at mark: Mark?, _ message: String) -> ScenarioError {
        ScenarioError(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1, message: message)
    }

    package func check(_ node: Node, _ shape: Shape, _ path: String) throws(ScenarioError) -> SpecValue {
        switch shape {
        case .string, .integer, .number, .boolean, .duration, .countOrAll: return try checkScalar(node, shape, path)
        case .object(let spec): return try checkObject(node, spec, path)
        case .array(let element): return try checkArray(node, element, path)
        case .map(let valueShape, let keys): return try checkMap(node, valueShape, keys, path)
        case .oneOf(let shapes): return try checkOneOf(node, shapes, path)
        case .choice(let fields): return try checkChoice(node, fields, path)
        case .any: return try anyValue(node, path)
        case .profile: return try checkDialectName(node, path)
        }
    }

    /// A scalar of the shape: a string (of the allowed ones), a number, a duration, ...
    private func checkScalar(_ node: Node, _ shape: Shape, _ path: String) throws(ScenarioError) -> SpecValue {
        switch shape {
        case .string(let allowed):
            guard case .scalar(let scalar) = node, !node.isTag(.null) else { throw error(node, "\(path): expected a string, got \(describe(node))") }
            if let allowed, !allowed.contains(scalar.string) {
                throw error(
                    node,
                    "\(path): '\(scalar.string)' is not one of \(allowed.joined(separator: ", "))\(Suggestion.hint(for: scalar.string, in: allowed))")
            }
            return .string(scalar.string, node.mark)
        case .integer(let minimum):
            guard node.isTag(.int), let value = node.int else { throw error(node, "\(path): expected a whole number, got \(describe(node))") }
            if let minimum, value < minimum { throw error(node, "\(path): must be at least \(minimum), got \(value)") }
            return .integer(value, node.mark)
        case .number(let minimum):
            guard node.isTag(.int) || node.isTag(.float), let value = node.float ?? node.int.map(Double.init) else {
                throw error(node, "\(path): expected a number, got \(describe(node))")
            }
            if let minimum, value < minimum { throw error(node, "\(path): must be at least \(minimum), got \(value)") }
            return .number(value, node.mark)
        case .boolean:
            guard node.isTag(.bool), let value = node.bool else { throw error(node, "\(path): expected true or false, got \(describe(node))") }
            return .boolean(value, node.mark)
        case .duration:
            if node.isTag(.int) || node.isTag(.float), let value = node.float ?? node.int.map(Double.init), value >= 0 {
                return .number(value, node.mark)
            }
            if case .scalar(let scalar) = node, let seconds = Self.seconds(scalar.string) { return .number(seconds, node.mark) }
            throw error(node, "\(path): expected a duration (seconds, or a number with s, m, h or d such as 90s), got \(describe(node))")
        case .countOrAll:
            if node.isTag(.int), let value = node.int, value >= 0 { return .integer(value, node.mark) }
            if case .scalar(let scalar) = node, scalar.string == "all" { return .string("all", node.mark) }
            throw error(node, "\(path): expected a whole number or 'all', got \(describe(node))")
        default: throw error(node, "\(path): not a scalar shape")
        }
    }

    /// A mapping of the spec's fields: unknown, repeated and missing keys are problems of their own.
    private func checkObject(_ node: Node, _ spec: ObjectSpec, _ path: String) throws(ScenarioError) -> SpecValue {
        guard case .mapping(let mapping) = node else { throw error(node, "\(path): expected a mapping (\(spec.name)), got \(describe(node))") }
        var result: [String: SpecValue] = [:]
        let names = spec.fields.map(\.name)
        var seen = Set<String>()
        for (key, value) in mapping.mergedPairs {
            guard let name = key.string, let field = spec.fields.first(where: { $0.name == name }) else {
                found.add(
                    error(
                        key,
                        "\(path): unknown key '\(key.string ?? "?")' in \(spec.name)\(Suggestion.hint(for: key.string ?? "", in: names)); expected one of: \(names.joined(separator: ", "))"
                    )
                )
                continue
            }
            guard seen.insert(name).inserted else {
                found.add(error(key, "\(path): '\(name)' appears twice"))
                continue
            }
            result[name] = checkChild(value, field.shape, path.isEmpty ? name : "\(path).\(name)")
        }
        for field in spec.fields where field.required && !seen.contains(field.name) {
            found.add(error(node, "\(path.isEmpty ? spec.name : path): missing required key '\(field.name)' (\(field.doc))"))
        }
        return .object(result, node.mark)
    }

    /// A list, each item checked on its own.
    private func checkArray(_ node: Node, _ element: Shape, _ path: String) throws(ScenarioError) -> SpecValue {
        guard case .sequence(let sequence) = node else { throw error(node, "\(path): expected a list, got \(describe(node))") }
        var items: [SpecValue] = []
        for (index, item) in sequence.enumerated() {
            if let value = checkChild(item, element, "\(path)[\(index)]") { items.append(value) }
        }
        return .array(items, node.mark)
    }

    /// A mapping of any (or the listed) keys to values of one shape.
    private func checkMap(_ node: Node, _ valueShape: Shape, _ keys: [String]?, _ path: String) throws(ScenarioError) -> SpecValue {
        guard case .mapping(let mapping) = node else { throw error(node, "\(path): expected a mapping, got \(describe(node))") }
        var result: [String: SpecValue] = [:]
        for (key, value) in mapping.mergedPairs {
            let name = key.string ?? ""
            if let keys, !keys.contains(name) {
                found.add(
                    error(
                        key,
                        "\(path): unknown key '\(name)'\(Suggestion.hint(for: name, in: keys)); expected one of: \(keys.joined(separator: ", "))")
                )
                continue
            }
            result[name] = checkChild(value, valueShape, "\(path).\(name)")
        }
        return .object(result, node.mark)
    }

    /// The first alternative that fits; each is tried on its own: its problems count only if none fits.
    private func checkOneOf(_ node: Node, _ shapes: [Shape], _ path: String) throws(ScenarioError) -> SpecValue {
        // Each alternative is tried on its own: its problems count only if none fits.
        var first: ScenarioError? = nil
        for candidate in shapes {
            let trial = SpecChecker(file: file)
            do throws(ScenarioError) {
                let value = try trial.check(node, candidate, path)
                if let problem = trial.found.problems.first { throw problem }
                return value
            } catch {
                if first == nil { first = error }
            }
        }
        throw first ?? error(node, "\(path): unexpected value")
    }

    /// A step: a mapping of exactly one of the fields.
    private func checkChoice(_ node: Node, _ fields: [Field], _ path: String) throws(ScenarioError) -> SpecValue {
        let names = fields.map(\.name)
        // A bare word (`- wait_for_all`) is not a step; a step is `- name: value`.
        guard case .mapping(let mapping) = node, mapping.count == 1, let key = mapping.first?.key, let value = mapping.first?.value else {
            throw error(node, "\(path): a step is a mapping with exactly one key, one of: \(names.joined(separator: ", "))")
        }
        guard let name = key.string, let field = fields.first(where: { $0.name == name }) else {
            throw error(
                key,
                "\(path): unknown step '\(key.string ?? "?")'\(Suggestion.hint(for: key.string ?? "", in: names)); expected one of: \(names.joined(separator: ", "))"
            )
        }
        guard let checked = checkChild(value, field.shape, "\(path).\(name)") else { return .object([:], node.mark) }
        return .object([name: checked], node.mark)
    }

    /// A built-in dialect's name, or one a dialect file may declare.
    private func checkDialectName(_ node: Node, _ path: String) throws(ScenarioError) -> SpecValue {
        guard case .scalar(let scalar) = node, !node.isTag(.null) else {
            throw error(node, "\(path): expected a dialect name, got \(describe(node))")
        }
        let name = scalar.string
        let builtIn = Dialects.names
        if builtIn.contains(name) { return .string(name, node.mark) }
        let declarable = !name.isEmpty && name.allSatisfy { ($0.isLowercase && $0.isASCII) || $0.isNumber || $0 == "-" }
        if !declarable || Suggestion.closest(to: name, in: builtIn) != nil {
            throw error(
                node,
                "\(path): '\(name)' is not a dialect\(Suggestion.hint(for: name, in: builtIn)); expected one of \(builtIn.joined(separator: ", ")), or the name of a declared dialect (docs/dialects.md)"
            )
        }
        return .string(name, node.mark)
    }

    /// A YAML value as written: scalars by their resolved tag, keys as strings.
    private func anyValue(_ node: Node, _ path: String) throws(ScenarioError) -> SpecValue {
        switch node {
        case .scalar(let scalar):
            if node.isTag(.null) { return .null(node.mark) }
            if node.isTag(.bool), let value = node.bool { return .boolean(value, node.mark) }
            if node.isTag(.int), let value = node.int { return .integer(value, node.mark) }
            if node.isTag(.float), let value = node.float { return .number(value, node.mark) }
            return .string(scalar.string, node.mark)
        case .mapping(let mapping):
            var result: [String: SpecValue] = [:]
            for (key, value) in mapping.mergedPairs {
                guard let name = key.string else { throw error(key, "\(path): a key must be a string") }
                result[name] = try anyValue(value, "\(path).\(name)")
            }
            return .object(result, node.mark)
        case .sequence(let sequence):
            var items: [SpecValue] = []
            for (index, item) in sequence.enumerated() { items.append(try anyValue(item, "\(path)[\(index)]")) }
            return .array(items, node.mark)
        case .alias:
            throw error(node, "\(path): YAML aliases are not supported here")
        }
    }

    package func describe(_ node: Node) -> String {
        switch node {
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .scalar(let scalar):
            node.isTag(.null)
                ? "nothing (null)"
                : node.isTag(.int) || node.isTag(.float)
                    ? "the number \(scalar.string)"
                    : node.isTag(.bool)
                        ? scalar.string
                        : "the string '\(scalar.string)'"
        case .alias: "an alias"
        }
    }

    /// "90", "90s", "1.5m", "2h", "1d".
    package static func seconds(_ text: String) -> Double? {
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var factor = 1.0
        if let last = body.last, let unit = units[last] {
            factor = unit
            body = body.dropLast()
        }
        guard let value = Double(body), value >= 0, value.isFinite else { return nil }
        return value * factor
    }
}

/// JSON Schema (draft 2020-12) for the scenario format, generated from the specs.
package enum SchemaWriter {
    /// A whole schema document for a format whose root is `spec`.
    package static func document(_ spec: ObjectSpec, title: String, source: String) -> String {
        var root = schema(.object(spec))
        root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        root["title"] = title
        root["$comment"] = "Generated by \(source); do not edit."
        // The tree holds only strings, numbers, booleans, arrays and objects.
        let data = (try? JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    package static func schema(_ shape: Shape, doc: String? = nil) -> [String: Any] {
        var out: [String: Any]
        switch shape {
        case .string(let allowed):
            out = ["type": ["string", "number"]]
            if let allowed { out = ["enum": allowed] }
        case .integer(let minimum):
            out = ["type": "integer"]
            if let minimum { out["minimum"] = minimum }
        case .number(let minimum):
            out = ["type": "number"]
            if let minimum { out["minimum"] = minimum }
        case .boolean: out = ["type": "boolean"]
        case .duration:
            out = ["oneOf": [["type": "number", "minimum": 0], ["type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?[smhd]?$"]]]
        case .countOrAll:
            out = ["oneOf": [["type": "integer", "minimum": 0], ["const": "all"]]]
        case .object(let spec):
            var properties: [String: Any] = [:]
            for field in spec.fields { properties[field.name] = schema(field.shape, doc: field.doc) }
            out = ["type": "object", "properties": properties, "additionalProperties": false]
            let required = spec.fields.filter(\.required).map(\.name)
            if !required.isEmpty { out["required"] = required }
        case .array(let element): out = ["type": "array", "items": schema(element)]
        case .map(let value, let keys):
            out = ["type": "object", "additionalProperties": schema(value)]
            if let keys { out["propertyNames"] = ["enum": keys] }
        case .oneOf(let shapes): out = ["oneOf": shapes.map { schema($0) }]
        case .any: out = [:]
        case .profile: out = ["type": "string", "pattern": "^[a-z0-9-]+$", "examples": Dialects.names]
        case .choice(let fields):
            out = [
                "oneOf": fields.map { field in
                    [
                        "type": "object", "properties": [field.name: schema(field.shape, doc: field.doc)],
                        "required": [field.name], "additionalProperties": false, "description": field.doc,
                    ] as [String: Any]
                }
            ]
        }
        if let doc { out["description"] = doc }
        return out
    }
}

extension Node {
    /// Whether the resolved tag is `name` (Yams keeps `Tag.name` internal).
    package func isTag(_ name: Tag.Name) -> Bool { tag.rawValue == name.rawValue }
}

extension Node.Mapping {
    /// The pairs with YAML merge keys expanded (`<<: *base`, or a list of
    /// such): the mapping's own keys win, then each merged mapping's in order.
    /// A `<<` whose value is no mapping stays, for the checker to refuse.
    package var mergedPairs: [(key: Node, value: Node)] {
        var own: [(key: Node, value: Node)] = []
        var merged: [Node.Mapping] = []
        for (key, value) in self {
            guard key.isTag(.merge) else {
                own.append((key, value))
                continue
            }
            switch value {
            case .mapping(let mapping): merged.append(mapping)
            case .sequence(let items) where items.allSatisfy({ $0.mapping != nil }): merged += items.compactMap(\.mapping)
            default: own.append((key, value))
            }
        }
        var names = Set(own.compactMap { $0.key.string })
        for mapping in merged {
            for (key, value) in mapping.mergedPairs where names.insert(key.string ?? "").inserted { own.append((key, value)) }
        }
        return own
    }
}
