// An extension imports only AppexExtensionKit: the item, attachment and error types it works
// with (ExtensionItem, Attachment, RequestError, MemoryWarning.Level, ...) are the wire's own.
@_exported import AppexWire
