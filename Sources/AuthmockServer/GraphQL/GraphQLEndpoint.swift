import AuthmockCore
import Foundation
import GraphQL
import HTTPTypes
import Hummingbird
import NIOCore

/// `GET` and `POST /graphql`, the same in every dialect: the request was
/// read on arrival (`GraphQLCall`), is validated against `APISchema`, its
/// token judged by the dialect like any `/api/` request, and executed by
/// GraphQLSwift. A refused token answers the dialect's own 401/403, or, with
/// `graphql_auth_errors: body`, 200 with `UNAUTHENTICATED`/`FORBIDDEN` in
/// `errors` as Apollo Server does. Answers are GraphQL's own JSON shape in
/// every dialect (a dialect's `resources` template does not wrap them); a refresh on resources
/// still adds its header, through `finishResource`.
struct GraphQLEndpoint: Sendable {
    let schema: GraphQLSchema
    let notes = NoteStore()

    init() throws { schema = try APISchema.make() }

    static func add(to routes: ClientRoutes, mock: Authmock) {
        for method in [HTTPRequest.Method.get, .post] {
            routes.issuing(method, GraphQLCall.path) { request, context in
                try await mock.graphQL.answer(request, context: context, mock: mock)
            }
        }
    }

    func answer(_ request: Request, context: AuthmockRequestContext, mock: Authmock) async throws -> ClientAnswer {
        guard case .graphQL(let read) = context.route.body else {
            return .plain(fail(.badRequest, message: "not a GraphQL request", context: context))
        }
        let call: GraphQLCall
        switch read {
        case .failure(.badRequest(let text)): return .plain(fail(.badRequest, message: text, context: context))
        case .failure(.overLimit(let text)): return .plain(fail(.overLimit, message: text, context: context))
        case .failure(.parseFailed(let error)):
            return .plain(fail(.parseFailed, errors: [Self.coded(error.error, GraphQLAPIError.parseFailed.row.code)], context: context))
        case .success(let read): call = read
        }
        // GraphQL over HTTP: GET must not change anything.
        if call.operation != .query, request.method != .post {
            return .plain(
                fail(.mutationOverGet, message: "send the \(call.operation.rawValue) with POST", headers: [.allow: "POST"], context: context))
        }
        let problems = validate(schema: schema, ast: call.document)
        if !problems.isEmpty {
            return .plain(
                fail(.validationFailed, errors: problems.map { Self.coded($0, GraphQLAPIError.validationFailed.row.code) }, context: context))
        }
        if call.introspectionOnly {
            let execution = GraphQLExecution(grant: nil, notes: notes, clock: mock.clock)
            return .plain(try await execute(call, execution, context: context))
        }
        switch try await mock.dialect.authorizeResource(request, context: context, mock: mock) {
        case .failure(let refusal):
            guard mock.options.graphQLAuthErrors == .body else { return .plain(mock.dialect.fail(refusal, context: context)) }
            return .plain(bodyRefusal(refusal, context: context))
        case .success(let access):
            let execution = GraphQLExecution(grant: access.grant, notes: notes, clock: mock.clock)
            let response = try await execute(call, execution, context: context)
            var answer = try await mock.dialect.finishResource(response, access: access, mock: mock)
            answer.mutationsApplied = call.operation == .mutation ? execution.mutationsApplied : nil
            return answer
        }
    }

    private func execute(_ call: GraphQLCall, _ execution: GraphQLExecution, context: AuthmockRequestContext) async throws -> Response {
        var result = try await GraphQL.execute(
            schema: schema, documentAST: call.document, rootValue: (), context: execution, variableValues: call.variables,
            operationName: call.operationName)
        // A resolver's documented failure gets its code; anything else is a bug, said as such.
        result.errors = result.errors.map { error in
            let failure = error.originalError as? FieldFailure
            let code = failure?.error.row.code ?? CommonError.internalError.row.code
            return GraphQLError(
                message: failure?.detail ?? error.message, locations: error.locations, path: error.path, extensions: ["code": .string(code)])
        }
        if let first = result.errors.first, case .string(let code)? = first.extensions["code"] { context.notes.errorCode = code }
        return Self.response(result)
    }

    /// `graphql_auth_errors: body`: 200, `data: null`, the reason in `extensions`.
    private func bodyRefusal(_ refusal: Situation, context: AuthmockRequestContext) -> Response {
        let reason: String
        switch refusal {
        case .insufficientScope(let scope):
            let row = GraphQLAPIError.forbidden.row
            return fail(
                .forbidden,
                errors: [GraphQLError(message: row.message + ": needs \(scope)", extensions: ["code": .string(row.code), "scope": .string(scope)])],
                context: context)
        case .noAccessToken(let notBearer): reason = notBearer ? "not_bearer" : "missing_token"
        case .accessToken(let failure): reason = failure.rawValue
        case .refreshTokenAsAccessToken: reason = "refresh_token_as_access_token"
        case .refreshToken(let failure): reason = "refresh_token_" + failure.rawValue
        // authorizeResource refuses a resource with the situations above only; a store failure is thrown, not returned.
        default: reason = "invalid_token"
        }
        let row = GraphQLAPIError.unauthenticated.row
        let message = row.message + ": " + reason.replacingOccurrences(of: "_", with: " ")
        return fail(
            .unauthenticated, errors: [GraphQLError(message: message, extensions: ["code": .string(row.code), "reason": .string(reason)])],
            context: context)
    }

    /// A documented error with one message, noted for the journal.
    private func fail(_ error: GraphQLAPIError, message: String, headers: HTTPFields = [:], context: AuthmockRequestContext) -> Response {
        let row = error.row
        return fail(
            error, errors: [GraphQLError(message: row.message + ": " + message, extensions: ["code": .string(row.code)])], headers: headers,
            context: context)
    }

    private func fail(_ error: GraphQLAPIError, errors: [GraphQLError], headers: HTTPFields = [:], context: AuthmockRequestContext) -> Response {
        let row = error.row
        context.notes.errorCode = row.code
        // Request errors carry no `data`; a refused operation has `data: null`.
        let data: Map? = row.status == 200 ? .null : nil
        return Self.response(GraphQLResult(data: data, errors: errors), status: .init(code: row.status), headers: headers)
    }

    /// `error` with `extensions.code` set.
    static func coded(_ error: GraphQLError, _ code: String) -> GraphQLError {
        GraphQLError(message: error.message, locations: error.locations, path: error.path, extensions: ["code": .string(code)])
    }

    private static func response(_ result: GraphQLResult, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        let encoder = GraphQLJSONEncoder()
        let bytes = (try? encoder.encode(result)) ?? Data(#"{"errors":[{"message":"internal error: the result could not be encoded"}]}"#.utf8)
        return JSONResponse.response(ByteBuffer(bytes: bytes), status: status, headers: headers)
    }
}
