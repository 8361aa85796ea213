import Hummingbird
import Logging

// Port from the first argument; answers GET /hello with a small JSON body
// (about the size of authmock's /api/me answer is not the point: this is
// the cost of the framework itself).
let port = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 8081
let router = Router()
router.get("/hello") { _, _ in
    Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: #"{"hello":"world"}"#)))
}
var logger = Logger(label: "hello")
logger.logLevel = .warning
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
try await app.runService()
