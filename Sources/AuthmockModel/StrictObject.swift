import AuthmockCore
public import Foundation

/// A JSON (or YAML) object read strictly: unknown keys and wrong types are
/// errors that name the field, say what was expected and suggest the closest
/// known key. Control requests and scenario steps share it.
public struct StrictObject: @unchecked Sendable {
    public let values: [String: Any]
    /// Where this object sits, e.g. `action` or `steps[2].fault`; empty at the root.
    public let path: String

    public init(_ values: [String: Any], path: String = "") {
        self.values = values
        self.path = path
    }

    /// Parses a request body; an empty body is an empty object.
    public init(json data: Data) throws(ControlInputError) {
        if data.isEmpty || data.allSatisfy({ [0x20, 0x0A, 0x0D, 0x09].contains($0) }) {
            self.init([:])
            return
        }
        guard let parsed = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            throw ControlInputError(.invalidJSON, "body is not valid JSON")
        }
        guard let object = parsed as? [String: Any] else {
            throw ControlInputError(.invalidJSON, "body must be a JSON object, got \(Self.typeName(parsed))")
        }
        self.init(object)
    }

    public func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Fails on the first key not in `known`.
    public func allow(_ known: [String]) throws(ControlInputError) {
        for key in values.keys.sorted() where !known.contains(key) {
            throw ControlInputError(
                .unknownField,
                "unknown field '\(name(key))'\(Suggestion.hint(for: key, in: known)); expected one of: \(known.joined(separator: ", "))")
        }
    }

    public func has(_ key: String) -> Bool { values[key] != nil && !(values[key] is NSNull) }

    public func string(_ key: String) throws(ControlInputError) -> String? {
        guard has(key) else { return nil }
        guard let text = values[key] as? String else { throw wrongType(key, "a string") }
        return text
    }

    public func double(_ key: String) throws(ControlInputError) -> Double? {
        guard has(key) else { return nil }
        let value = values[key]!
        if Self.isBool(value) { throw wrongType(key, "a number") }
        if let number = value as? Double { return number }
        if let number = value as? Int { return Double(number) }
        if let number = value as? NSNumber { return number.doubleValue }
        throw wrongType(key, "a number")
    }

    public func int(_ key: String) throws(ControlInputError) -> Int? {
        guard let number = try double(key) else { return nil }
        guard number.rounded() == number, abs(number) < 1e15 else { throw wrongType(key, "a whole number") }
        return Int(number)
    }

    public func bool(_ key: String) throws(ControlInputError) -> Bool? {
        guard has(key) else { return nil }
        guard Self.isBool(values[key]!), let flag = values[key] as? Bool else { throw wrongType(key, "true or false") }
        return flag
    }

    public func object(_ key: String) throws(ControlInputError) -> StrictObject? {
        guard has(key) else { return nil }
        guard let object = values[key] as? [String: Any] else { throw wrongType(key, "an object") }
        return StrictObject(object, path: name(key))
    }

    /// An object of string values (headers); numbers are accepted and written as text.
    public func stringMap(_ key: String) throws(ControlInputError) -> [String: String]? {
        guard let object = try object(key) else { return nil }
        var result: [String: String] = [:]
        for (name, value) in object.values {
            if let text = value as? String {
                result[name] = text
            } else if !Self.isBool(value), let number = value as? NSNumber {
                result[name] = number.stringValue
            } else {
                throw object.wrongType(name, "a string")
            }
        }
        return result
    }

    /// A string, or a list of strings.
    public func strings(_ key: String) throws(ControlInputError) -> [String]? {
        guard has(key) else { return nil }
        if let list = values[key] as? [Any] {
            guard let texts = list as? [String] else { throw wrongType(key, "a string or a list of strings") }
            return texts
        }
        guard let text = values[key] as? String else { throw wrongType(key, "a string or a list of strings") }
        return [text]
    }

    public func required<T>(_ value: T?, _ key: String) throws(ControlInputError) -> T {
        guard let value else { throw ControlInputError(.missingField, "missing required field '\(name(key))'") }
        return value
    }

    public func wrongType(_ key: String, _ expected: String) -> ControlInputError {
        ControlInputError(.invalidValue, "field '\(name(key))' must be \(expected), got \(Self.typeName(values[key] ?? NSNull()))")
    }

    /// JSONSerialization hands booleans back as NSNumber (which also casts
    /// to Bool for 0 and 1), so the dynamic type is what tells them apart.
    static func isBool(_ value: Any) -> Bool {
        type(of: value) == Bool.self || String(describing: type(of: value)) == "__NSCFBoolean"
    }

    static func typeName(_ value: Any) -> String {
        switch value {
        case is String: "a string"
        case is [Any]: "an array"
        case is [String: Any]: "an object"
        case is NSNull: "null"
        default: isBool(value) ? "a boolean" : "a number"
        }
    }
}

/// Bad input to a control operation: always a 400 with a sentence that says
/// what was wrong and what was expected.
public struct ControlInputError: Error, Equatable, Sendable, CustomStringConvertible {
    public let kind: ControlError
    public let message: String

    public init(_ kind: ControlError, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// Errors of the control API (`/_authmock/`), the same in every dialect:
/// `{"error": code, "message": ...}`. Their statuses and messages are the
/// server's error table.
public enum ControlError: String, CaseIterable, Sendable {
    case invalidJSON, unknownField, missingField, invalidValue, adminTokenRequired, crossOrigin, foreignHost, notFound, methodNotAllowed, notJSON,
        notRotatable, notJudging
    case storeUnavailable
}
