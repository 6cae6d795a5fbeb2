// appex-sdk-test-extension: an extension the SDK tests drive. The first input item's content
// text is a command; what the SDK delivered (callbacks, cancels, the outcome of a second
// answer) goes into a journal that the command "report" returns.
import AppexExtensionKit

AppexExtension.main(handler: CommandHandler())
