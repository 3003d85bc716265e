CREATE TABLE "requests" (
	"session_id" text COLLATE "C" NOT NULL,
	"request_id" text COLLATE "C" NOT NULL,
	"fingerprint" text COLLATE "C" NOT NULL,
	"answer" text COLLATE "C" NOT NULL,
	"created_at" double precision NOT NULL,
	CONSTRAINT "requests_session_id_request_id_pk" PRIMARY KEY("session_id","request_id")
);
