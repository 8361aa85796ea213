import Foundation
import GraphQL
import HTTPTypes
import Hummingbird
import NIOCore
import NIOFoundationEssentialsCompat
import OrderedCollections

/// A GraphQL request as read on arrival (GraphQL over HTTP: a JSON body on
/// POST, `query`/`operationName`/`variables` parameters on GET): the document
/// parsed and the operation picked, so the journal can name the operation,
/// the scope check knows whether it is a mutation, and the route executes
/// what was parsed here.
public struct GraphQLCall: Sendable {
    let document: Document
    let operationName: String?
    let variables: [String: Map]
    let operation: OperationType
    /// What the journal shows: `query Items`, `mutation CreateNote`, or the
    /// bare type for an anonymous operation.
    public let label: String
    /// Only `__schema`, `__type` and `__typename` at the top: tools (Apollo's
    /// codegen, GraphiQL) read the schema without a token.
    let introspectionOnly: Bool

    /// Queries need `read`, mutations `write`, as GET and POST do under `/api/`.
    var requiredScope: String { operation == .query ? "read" : "write" }
}

/// Why a request to `/graphql` is not a GraphQL request this server can run.
public enum GraphQLRequestProblem: Error, Sendable {
    /// Not a GraphQL request at all; the text says what is wrong.
    case badRequest(String)
    /// The document does not parse.
    case parseFailed(GraphQLSyntaxError)
}

/// The parser's error, with where in the document it is.
public struct GraphQLSyntaxError: Sendable {
    let error: GraphQLError
}

extension GraphQLCall {
    public static let path = "/graphql"
    /// Deeper nesting is refused before parsing: the parser recurses per level.
    static let maxNesting = 64

    /// Reads a request to `/graphql`.
    static func read(method: HTTPRequest.Method, parameters: Hummingbird.Parameters, body: ByteBuffer) -> Result<GraphQLCall, GraphQLRequestProblem> {
        let fields: (query: String, operationName: String?, variables: [String: Map])
        switch method {
        case .get, .head:
            guard let query = parameters.get("query"), !query.isEmpty else { return .failure(.badRequest("GET needs a `query` parameter")) }
            var variables: [String: Map] = [:]
            if let text = parameters.get("variables"), !text.isEmpty {
                guard case .dictionary(let object)? = try? JSONDecoder().decode(Map.self, from: Data(text.utf8)) else {
                    return .failure(.badRequest("`variables` must be a JSON object"))
                }
                variables = Dictionary(uniqueKeysWithValues: object.map { ($0.key, $0.value) })
            }
            fields = (query, parameters.get("operationName").flatMap { $0.isEmpty ? nil : $0 }, variables)
        default:
            let decoded: Map
            do {
                decoded = try JSONDecoder().decode(Map.self, from: Data(buffer: body))
            } catch {
                return .failure(.badRequest(body.readableBytes == 0 ? "the body is empty: send {\"query\": \"...\"}" : "the body is not valid JSON"))
            }
            switch decoded {
            case .array: return .failure(.badRequest("batched operations (a JSON array) are not supported: send one operation per request"))
            case .dictionary(let object):
                guard case .string(let query)? = object["query"], !query.isEmpty else { return .failure(.badRequest("the body needs a string `query`")) }
                var operationName: String? = nil
                switch object["operationName"] {
                case nil, .null?, .undefined?: break
                case .string(let name)?: operationName = name.isEmpty ? nil : name
                default: return .failure(.badRequest("`operationName` must be a string"))
                }
                var variables: [String: Map] = [:]
                switch object["variables"] {
                case nil, .null?, .undefined?: break
                case .dictionary(let values)?: variables = Dictionary(uniqueKeysWithValues: values.map { ($0.key, $0.value) })
                default: return .failure(.badRequest("`variables` must be a JSON object"))
                }
                fields = (query, operationName, variables)
            default: return .failure(.badRequest("the body must be a JSON object with a string `query`"))
            }
        }
        if nesting(of: fields.query) > maxNesting {
            return .failure(.badRequest("the document nests deeper than \(maxNesting) levels"))
        }
        let document: Document
        do {
            document = try parse(source: Source(body: Self.paddedForLexer(fields.query), name: "GraphQL request"))
        } catch let error as GraphQLError {
            return .failure(.parseFailed(GraphQLSyntaxError(error: error)))
        } catch {
            return .failure(.parseFailed(GraphQLSyntaxError(error: GraphQLError(message: "\(error)"))))
        }
        let operations = document.definitions.compactMap { $0 as? OperationDefinition }
        let chosen: OperationDefinition
        if let name = fields.operationName {
            guard let named = operations.first(where: { $0.name?.value == name }) else {
                return .failure(.badRequest("the document has no operation named \(name)"))
            }
            chosen = named
        } else {
            guard operations.count == 1, let only = operations.first else {
                return .failure(.badRequest(operations.isEmpty ? "the document has no operation" : "the document has several operations: name one in `operationName`"))
            }
            chosen = only
        }
        let topLevel = chosen.selectionSet.selections
        let introspection = !topLevel.isEmpty && topLevel.allSatisfy { ($0 as? Field)?.name.value.hasPrefix("__") ?? false }
        return .success(
            GraphQLCall(
                document: document, operationName: fields.operationName, variables: fields.variables, operation: chosen.operation,
                label: chosen.operation.rawValue + (chosen.name.map { " " + $0.value } ?? ""), introspectionOnly: introspection))
    }

    /// GraphQLSwift 4.3.0's lexer reads a string escape's bytes (`\\`, then
    /// `u` and four hex digits) without checking for the end of the document
    /// and traps when a document ends inside one (found by scripts/fuzz.sh).
    /// Trailing spaces are insignificant in GraphQL, so such a document is
    /// given enough of them for the lexer to report its own syntax error.
    static func paddedForLexer(_ query: String) -> String {
        guard query.utf8.suffix(6).contains(UInt8(ascii: "\\")) else { return query }
        return query + "      "
    }

    /// How deeply brackets nest in `text`, outside strings and comments.
    static func nesting(of text: String) -> Int {
        var depth = 0, deepest = 0
        var inString = false, inComment = false, escaped = false
        for byte in text.utf8 {
            if inComment {
                if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { inComment = false }
            } else if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else {
                switch byte {
                case UInt8(ascii: "#"): inComment = true
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "("):
                    depth += 1
                    deepest = max(deepest, depth)
                case UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: ")"): depth -= 1
                default: break
                }
            }
        }
        return deepest
    }
}
