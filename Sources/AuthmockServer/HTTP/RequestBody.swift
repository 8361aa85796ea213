import NIOFoundationEssentialsCompat
import Foundation
import NIOCore

/// A request body as the dialect read it while classifying the request. The
/// observation middleware parses it once and passes it on in the context, so
/// the route never reads or parses the body again.
public enum RequestBody: Sendable {
    /// No route of this dialect reads the body (resources echo the raw bytes).
    case unread
    /// An `application/x-www-form-urlencoded` body (OAuth 2.0 endpoints).
    case form(Result<FormBody, FormBody.ParseError>)
    /// A JSON object (the app-backend dialects).
    case json(Result<JSONFields, JSONFields.Problem>)
    /// A GraphQL request (`/graphql`, every dialect), body or query parameters.
    case graphQL(Result<GraphQLCall, GraphQLRequestProblem>)

    /// Parses `bytes` as a JSON object.
    static func json(_ bytes: ByteBuffer) -> RequestBody { .json(JSONFields.parse(bytes)) }

    /// Parses `bytes` as a form.
    static func form(_ bytes: ByteBuffer) -> RequestBody {
        // Bytes that are not UTF-8 are refused, not silently replaced with U+FFFD.
        guard let text = bytes.withUnsafeReadableBytes({ String(validating: $0.bindMemory(to: UInt8.self), as: UTF8.self) }) else {
            return .form(.failure(.malformed))
        }
        do { return .form(.success(try FormBody(text))) } catch { return .form(.failure(error)) }
    }
}

/// The top-level members of a JSON object body, as far as the dialects read
/// them: strings, nulls, and anything else (which is the wrong type).
public struct JSONFields: Sendable {
    enum Value: Sendable, Equatable {
        case string(String), null, other
    }
    private let values: [String: Value]

    /// Why a JSON body could not be read.
    public enum Problem: Error, Equatable, Sendable {
        case malformed
        case notAnObject
        case missing(String)
        case wrongType(String)
        /// A `Content-Type` the endpoint does not read (`other_content_types: refuse`): the type, or "none".
        case unsupportedMediaType(String)
    }

    static func parse(_ bytes: ByteBuffer) -> Result<JSONFields, Problem> {
        guard let parsed = try? JSONSerialization.jsonObject(with: Data(buffer: bytes), options: [.fragmentsAllowed]) else {
            return .failure(.malformed)
        }
        guard let object = parsed as? [String: Any] else { return .failure(.notAnObject) }
        var values: [String: Value] = [:]
        flatten(object, prefix: "", depth: 0, into: &values)
        return .success(JSONFields(values: values))
    }

    /// Members of nested objects are kept under dotted names too
    /// (`auth.username`), for declared dialects whose fields are nested.
    private static func flatten(_ object: [String: Any], prefix: String, depth: Int, into values: inout [String: Value]) {
        for (key, value) in object {
            let name = prefix + key
            if value is NSNull {
                values[name] = .null
            } else if let text = value as? String {
                values[name] = .string(text)
            } else {
                values[name] = .other
                if depth < 8, let nested = value as? [String: Any] { flatten(nested, prefix: name + ".", depth: depth + 1, into: &values) }
            }
        }
    }

    /// The string value of `name`, if it is one.
    subscript(name: String) -> String? {
        if case .string(let text)? = values[name] { return text }
        return nil
    }

    /// The named string fields, each present and non-empty.
    func strings(_ names: [String]) -> Result<[String: String], Problem> {
        var result: [String: String] = [:]
        for name in names {
            switch values[name] {
            case nil, .null?: return .failure(.missing(name))
            case .other?: return .failure(.wrongType(name))
            case .string(let text)?:
                guard !text.isEmpty else { return .failure(.missing(name)) }
                result[name] = text
            }
        }
        return .success(result)
    }
}
