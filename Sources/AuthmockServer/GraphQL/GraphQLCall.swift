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
    /// The request is over one of `GraphQLLimits`; the text says which.
    case overLimit(String)
}

/// The parser's error, with where in the document it is.
public struct GraphQLSyntaxError: Sendable {
    let error: GraphQLError
}

extension GraphQLCall {
    public static let path = "/graphql"

    /// Reads a request to `/graphql`.
    /// `query` is the URI's raw query string.
    static func read(method: HTTPRequest.Method, query rawQuery: String?, body: ByteBuffer) -> Result<GraphQLCall, GraphQLRequestProblem> {
        Result { () throws(GraphQLRequestProblem) in try parse(method: method, query: rawQuery, body: body) }
    }

    private static func parse(method: HTTPRequest.Method, query rawQuery: String?, body: ByteBuffer) throws(GraphQLRequestProblem) -> GraphQLCall {
        let fields: (query: String, operationName: String?, variables: [String: Map])
        switch method {
        case .get, .head:
            let parameters = formParameters(rawQuery ?? "")
            guard let query = parameters["query"], !query.isEmpty else { throw .badRequest("GET needs a `query` parameter") }
            var variables: [String: Map] = [:]
            if let text = parameters["variables"], !text.isEmpty {
                guard case .dictionary(let object) = try input(Data(text.utf8), named: "`variables`") else {
                    throw .badRequest("`variables` must be a JSON object")
                }
                variables = Dictionary(uniqueKeysWithValues: object.map { ($0.key, $0.value) })
            }
            fields = (query, parameters["operationName"].flatMap { $0.isEmpty ? nil : $0 }, variables)
        default:
            if body.readableBytes == 0 { throw .badRequest("the body is empty: send {\"query\": \"...\"}") }
            switch try input(Data(buffer: body), named: "the body") {
            case .array: throw .badRequest("batched operations (a JSON array) are not supported: send one operation per request")
            case .dictionary(let object):
                guard case .string(let query)? = object["query"], !query.isEmpty else { throw .badRequest("the body needs a string `query`") }
                var operationName: String? = nil
                switch object["operationName"] {
                case nil, .null?, .undefined?: break
                case .string(let name)?: operationName = name.isEmpty ? nil : name
                default: throw .badRequest("`operationName` must be a string")
                }
                var variables: [String: Map] = [:]
                switch object["variables"] {
                case nil, .null?, .undefined?: break
                case .dictionary(let values)?: variables = Dictionary(uniqueKeysWithValues: values.map { ($0.key, $0.value) })
                default: throw .badRequest("`variables` must be a JSON object")
                }
                fields = (query, operationName, variables)
            default: throw .badRequest("the body must be a JSON object with a string `query`")
            }
        }
        if let problem = GraphQLLimits.lexicalProblem(fields.query) { throw .overLimit(problem) }
        let document: Document
        do {
            document = try GraphQL.parse(source: Source(body: Self.paddedForLexer(fields.query), name: "GraphQL request"))
        } catch let error as GraphQLError {
            throw .parseFailed(GraphQLSyntaxError(error: error))
        } catch {
            throw .parseFailed(GraphQLSyntaxError(error: GraphQLError(message: "\(error)")))
        }
        let operations = document.definitions.compactMap { $0 as? OperationDefinition }
        let chosen: OperationDefinition
        if let name = fields.operationName {
            guard let named = operations.first(where: { $0.name?.value == name }) else {
                throw .badRequest("the document has no operation named \(name)")
            }
            chosen = named
        } else {
            guard operations.count == 1, let only = operations.first else {
                throw .badRequest(
                    operations.isEmpty ? "the document has no operation" : "the document has several operations: name one in `operationName`")
            }
            chosen = only
        }
        if let problem = GraphQLLimits.documentProblem(document, operation: chosen) { throw .overLimit(problem) }
        let topLevel = chosen.selectionSet.selections
        let introspection = !topLevel.isEmpty && topLevel.allSatisfy { ($0 as? Field)?.name.value.hasPrefix("__") ?? false }
        return GraphQLCall(
            document: document, operationName: fields.operationName, variables: fields.variables, operation: chosen.operation,
            label: chosen.operation.rawValue + (chosen.name.map { " " + $0.value } ?? ""), introspectionOnly: introspection)
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

    /// A query string as `application/x-www-form-urlencoded` reads it (what
    /// GraphQL over HTTP asks for): `+` is a space, then percent escapes; the
    /// first of a repeated name counts.
    static func formParameters(_ query: String) -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            let name = decoded(parts[0])
            if parameters[name] == nil { parameters[name] = parts.count > 1 ? decoded(parts[1]) : "" }
        }
        return parameters
    }

    /// JSON read in one pass within the input limits; not JSON at all is a bad request.
    private static func input(_ data: Data, named what: String) throws(GraphQLRequestProblem) -> Map {
        do {
            return try GraphQLInput.decode(data)
        } catch let limit as GraphQLInput.OverLimit {
            throw .overLimit(limit.message)
        } catch {
            throw .badRequest("\(what) is not valid JSON")
        }
    }
}
