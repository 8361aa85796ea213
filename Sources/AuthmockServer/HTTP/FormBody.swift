import AuthmockCore
import Foundation

/// An `application/x-www-form-urlencoded` body that remembers repeats, because
/// RFC 6749 section 3.2 forbids repeated parameters and the server must say so.
public struct FormBody: Sendable {
    private(set) var values: [String: [String]] = [:]

    public enum ParseError: Error, Sendable { case malformed }

    init() {}

    /// A browser-facing endpoint's query string, decoded as HTML forms
    /// encode it (`+` is a space, as in `scope=openid+profile`); an
    /// undecodable query reads as empty.
    init(query: String?) {
        self = (try? FormBody(query ?? "")) ?? FormBody()
    }

    init(_ text: String) throws(ParseError) {
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try Self.decode(parts[0])
            let value = parts.count > 1 ? try Self.decode(parts[1]) : ""
            values[name, default: []].append(value)
        }
    }

    private static func decode(_ raw: Substring) throws(ParseError) -> String {
        guard let decoded = raw.formDecoded else {
            throw .malformed
        }
        return decoded
    }

    /// Names that appear more than once.
    var repeatedNames: [String] { values.filter { $0.value.count > 1 }.map(\.key).sorted() }

    /// The single value of `name`, with empty treated as absent (RFC 6749 section 3.1).
    subscript(name: String) -> String? {
        guard let value = values[name]?.first, !value.isEmpty else { return nil }
        return value
    }
}
