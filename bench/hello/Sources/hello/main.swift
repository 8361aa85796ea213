import AsyncHTTPClient
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1

// `hello PORT`: answers GET /hello with a small JSON body: the cost of the
// framework itself.
// `hello PORT --forward UPSTREAM_PORT`: forwards every request to
// 127.0.0.1:UPSTREAM_PORT with AsyncHTTPClient (headers kept but Host and
// the length, bodies and answers streamed) and nothing else: the cost of
// any proxy built on these two libraries, which `authmock proxy` is.
let arguments = Array(CommandLine.arguments.dropFirst())
let port = arguments.first.flatMap(Int.init) ?? 8081
let upstream = arguments.firstIndex(of: "--forward").flatMap { arguments.dropFirst($0 + 1).first }.flatMap(Int.init)
var logger = Logger(label: "hello")
logger.logLevel = .warning

if let upstream {
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    let router = Router()
    router.on("{path+}", method: .get) { request, _ -> Response in
        var outbound = HTTPClientRequest(url: "http://127.0.0.1:\(upstream)\(request.uri.path)")
        outbound.method = .GET
        for field in request.headers where field.name != .contentLength {
            outbound.headers.add(name: field.name.rawName, value: field.value)
        }
        let answer = try await client.execute(outbound, timeout: .seconds(30))
        var headers = HTTPFields()
        for (name, value) in answer.headers where name.lowercased() != "connection" {
            if let name = HTTPFields.Element.Name(name) { headers.append(.init(name: name, value: value)) }
        }
        return Response(status: .init(code: Int(answer.status.code)), headers: headers, body: ResponseBody(asyncSequence: answer.body))
    }
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
    try await app.runService()
    try await client.shutdown()
} else {
    let router = Router()
    router.get("/hello") { _, _ in
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: #"{"hello":"world"}"#)))
    }
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
    try await app.runService()
}
