"""The word lists of mhaviz-small's designed teaching corpus (scripts/make_teaching_corpus.py).

Every word carries the attributes the grammar needs: a Korean noun its category (which
decides its numeral classifier and the verbs it goes with), a Korean verb its four finite
forms (plain present and past, honorific present and past: written out, so irregular and
suppletive verbs are right by construction), an English noun its plural, an English verb
its third-person singular and past forms.

The sets named HELD_OUT_* are kept out of one construction in the training text, so the
minimal pairs built from them test a rule, not a memorised pair.
"""

# Korean nouns by category: the category decides the classifier and the verbs that take it.
KO_NOUNS = {
    "animal": "고양이 강아지 개 쥐 토끼 닭 오리 소 돼지 염소 호랑이 사자 곰 여우 늑대 원숭이 코끼리 기린 "
              "거북 물고기 개구리 나비 거미 다람쥐 펭귄 고래 사슴 참새 비둘기 까치 병아리 햄스터 앵무새 "
              "고슴도치 판다 낙타 하마 악어 얼룩말 부엉이 독수리 달팽이 개미 잠자리 너구리 두더지 수달 "
              "코알라 캥거루 표범 갈매기 제비 올빼미 메뚜기 잉어",
    "person": "아이 학생 친구 소년 소녀 아기 남자 여자 언니 오빠 누나 형 동생 아저씨 아주머니 이웃 요리사 "
              "경찰관 간호사 농부 가수 화가 운전사 군인 점원 우체부 어린이 삼촌 이모 사촌 선수 기자 "
              "소방관 청소부 배우 학자 손자 손녀 조카 짝꿍",
    "honored": "할머니 할아버지 선생님 어머니 아버지 사장님 교수님 부모님 회장님 목사님 원장님 의사 선생님",
    "food": "밥 빵 사과 국 김치 떡 과자 라면 국수 고기 생선 치즈 케이크 아이스크림 수박 포도 딸기 당근 "
            "감자 달걀 만두 김밥 비빔밥 죽 수프 샐러드 피자 토마토 옥수수 귤 바나나 복숭아 참외 오이 "
            "호박 고구마 떡볶이 햄버거 쿠키 사탕 초콜릿 두부 버섯 양파 배추 멜론 자두 레몬",
    "drink": "물 우유 주스 커피 녹차 코코아 콜라 두유 식혜 보리차 홍차 사이다",
    "book": "책 공책 사전 잡지 만화책 소설 동화책 앨범 일기장 교과서 그림책 시집 수첩",
    "thing": "공 가방 상자 모자 열쇠 시계 인형 장난감 의자 책상 접시 숟가락 풍선 돌 우산 반지 거울 "
             "베개 지우개 컵 단추 바구니 양초 주머니 필통 선물 구슬 팽이 냄비 꽃병",
    "vehicle": "자동차 버스 자전거 기차 비행기 트럭 택시 오토바이 컴퓨터 냉장고 텔레비전 카메라 피아노 "
               "세탁기 전화기 청소기 선풍기 시내버스",
    "paper": "종이 사진 표 엽서 그림 카드 우표 지도 영수증 쪽지",
    "clothes": "옷 바지 치마 셔츠 코트 외투 잠옷 한복 정장 원피스 조끼 점퍼",
    "pair": "신발 양말 운동화 구두 슬리퍼 장화 부츠 샌들",
    "flower": "꽃 장미 튤립 국화 해바라기 백합 진달래 개나리 코스모스 민들레",
    "tree": "나무 소나무 사과나무 감나무 벚나무 은행나무 단풍나무 대나무 느티나무",
    "pencil": "연필 볼펜 붓 칼 가위 색연필 만년필",
    "letter": "편지 이메일",
    "house": "집 초가집 기와집 아파트 별장 오두막",
    "place": "학교 공원 시장 가게 도서관 병원 부엌 방 마당 정원 숲 산 강 바다 호수 교실 운동장 식당 "
             "카페 역 공항 마을 도시 시골 동물원 놀이터 수영장 극장 은행 우체국 거실 농장 해변 섬 "
             "빵집 서점 거리 동굴 서울 부산 호텔 미술관 박물관 체육관 연못 들판 골목 꽃집 약국 교회 "
             "시청 회사 목욕탕 주차장",
    "abstract": "영화 음악 노래 이야기 소리 라디오 뉴스 숙제 한국어 영어 수학 춤 게임 퍼즐 신문",
}
# "의사 선생님" is two words: kept out of the single-word lists below.
KO_NOUNS["honored"] = KO_NOUNS["honored"].replace(" 의사 선생님", "")

# The numeral classifier each counted category takes.
KO_CLASSIFIER = {"animal": "마리", "person": "명", "book": "권", "thing": "개", "food": "개",
                 "vehicle": "대", "paper": "장", "clothes": "벌", "pair": "켤레", "flower": "송이",
                 "tree": "그루", "pencil": "자루", "letter": "통", "house": "채", "drink": "잔"}
# Foods that are counted with 개 (a bowl of rice is not "밥 두 개").
KO_COUNTABLE_FOOD = set("사과 빵 떡 과자 만두 케이크 수박 토마토 옥수수 귤 바나나 복숭아 참외 오이 "
                        "호박 고구마 햄버거 쿠키 사탕 초콜릿 달걀 감자 당근 양파 멜론 자두 레몬".split())
# Native Korean numerals in their attributive form (before a classifier).
KO_NUMERALS = ["한", "두", "세", "네", "다섯", "여섯", "일곱", "여덟", "아홉", "열"]

KO_NAMES = "민수 지민 서연 하늘 준호 수진 영희 철수 유나 동현 지우 민지 현우 소라 은비 태양 다은 건우 " \
           "나래 승민 보람 예준 하준 미나 세진".split()


# Korean verbs: dictionary form -> (plain present, plain past, honorific present, honorific past)
# and the object categories they take (None: intransitive).
KO_VERBS = {
    # intransitive
    "자다": (("잔다", "잤다", "주무신다", "주무셨다"), None),
    "웃다": (("웃는다", "웃었다", "웃으신다", "웃으셨다"), None),
    "울다": (("운다", "울었다", "우신다", "우셨다"), None),
    "놀다": (("논다", "놀았다", "노신다", "노셨다"), None),
    "걷다": (("걷는다", "걸었다", "걸으신다", "걸으셨다"), None),
    "달리다": (("달린다", "달렸다", "달리신다", "달리셨다"), None),
    "쉬다": (("쉰다", "쉬었다", "쉬신다", "쉬셨다"), None),
    "앉다": (("앉는다", "앉았다", "앉으신다", "앉으셨다"), None),
    "일어나다": (("일어난다", "일어났다", "일어나신다", "일어나셨다"), None),
    "노래하다": (("노래한다", "노래했다", "노래하신다", "노래하셨다"), None),
    "춤추다": (("춤춘다", "춤췄다", "춤추신다", "춤추셨다"), None),
    "일하다": (("일한다", "일했다", "일하신다", "일하셨다"), None),
    "공부하다": (("공부한다", "공부했다", "공부하신다", "공부하셨다"), None),
    "운동하다": (("운동한다", "운동했다", "운동하신다", "운동하셨다"), None),
    "요리하다": (("요리한다", "요리했다", "요리하신다", "요리하셨다"), None),
    "산책하다": (("산책한다", "산책했다", "산책하신다", "산책하셨다"), None),
    "기도하다": (("기도한다", "기도했다", "기도하신다", "기도하셨다"), None),
    "말하다": (("말한다", "말했다", "말씀하신다", "말씀하셨다"), None),
    "기뻐하다": (("기뻐한다", "기뻐했다", "기뻐하신다", "기뻐하셨다"), None),
    # food and drink
    "먹다": (("먹는다", "먹었다", "드신다", "드셨다"), ["food"]),
    "마시다": (("마신다", "마셨다", "드신다", "드셨다"), ["drink"]),
    # transitive
    "보다": (("본다", "봤다", "보신다", "보셨다"), ["animal", "vehicle", "paper", "flower", "tree", "abstract:영화",
                                             "abstract:뉴스", "house"]),
    "읽다": (("읽는다", "읽었다", "읽으신다", "읽으셨다"), ["book", "letter", "abstract:신문", "paper:지도"]),
    "쓰다": (("쓴다", "썼다", "쓰신다", "쓰셨다"), ["letter", "paper:엽서", "paper:카드", "paper:쪽지"]),
    "사다": (("산다", "샀다", "사신다", "사셨다"), ["food", "drink", "book", "thing", "vehicle", "paper:표",
                                             "clothes", "pair", "flower", "pencil", "house"]),
    "팔다": (("판다", "팔았다", "파신다", "파셨다"), ["food", "thing", "book", "flower", "vehicle", "clothes"]),
    "만들다": (("만든다", "만들었다", "만드신다", "만드셨다"), ["food:빵", "food:케이크", "food:김밥", "food:만두",
                                                   "food:샐러드", "food:피자", "food:수프", "food:쿠키",
                                                   "thing:상자", "thing:인형", "thing:장난감", "thing:의자",
                                                   "thing:바구니", "thing:양초", "thing:팽이"]),
    "좋아하다": (("좋아한다", "좋아했다", "좋아하신다", "좋아하셨다"), ["animal", "food", "drink", "flower", "book",
                                                         "abstract:음악", "abstract:노래", "abstract:영화",
                                                         "abstract:이야기", "abstract:게임", "abstract:수학"]),
    "잡다": (("잡는다", "잡았다", "잡으신다", "잡으셨다"), ["animal:쥐", "animal:물고기", "animal:나비",
                                                 "animal:잠자리", "animal:메뚜기", "animal:참새", "animal:개구리",
                                                 "animal:잉어", "thing:공"]),
    "찾다": (("찾는다", "찾았다", "찾으신다", "찾으셨다"), ["thing", "animal", "book", "pencil", "pair", "clothes"]),
    "씻다": (("씻는다", "씻었다", "씻으신다", "씻으셨다"), ["food:사과", "food:딸기", "food:포도", "food:당근",
                                                 "food:감자", "food:토마토", "food:오이", "food:배추",
                                                 "thing:접시", "thing:컵", "thing:숟가락", "thing:냄비"]),
    "그리다": (("그린다", "그렸다", "그리신다", "그리셨다"), ["animal", "flower", "tree", "house", "paper:지도"]),
    "키우다": (("키운다", "키웠다", "키우신다", "키우셨다"), ["animal", "flower", "tree"]),
    "기다리다": (("기다린다", "기다렸다", "기다리신다", "기다리셨다"), ["person", "vehicle:버스", "vehicle:기차",
                                                         "vehicle:택시", "vehicle:시내버스", "letter"]),
    "만나다": (("만난다", "만났다", "만나신다", "만나셨다"), ["person"]),
    "돕다": (("돕는다", "도왔다", "도우신다", "도우셨다"), ["person"]),
    "안다": (("안는다", "안았다", "안으신다", "안으셨다"), ["animal:고양이", "animal:강아지", "animal:토끼",
                                                 "animal:햄스터", "animal:병아리", "person:아기", "thing:인형",
                                                 "thing:베개"]),
    "열다": (("연다", "열었다", "여신다", "여셨다"), ["thing:상자", "thing:가방", "vehicle:냉장고", "thing:주머니",
                                             "thing:필통", "thing:바구니"]),
    "닫다": (("닫는다", "닫았다", "닫으신다", "닫으셨다"), ["thing:상자", "thing:가방", "vehicle:냉장고",
                                                 "thing:필통", "book"]),
    "빌리다": (("빌린다", "빌렸다", "빌리신다", "빌리셨다"), ["book", "pencil", "thing:우산", "vehicle:자전거",
                                                 "vehicle:카메라"]),
    "고치다": (("고친다", "고쳤다", "고치신다", "고치셨다"), ["vehicle", "thing:시계", "thing:의자", "thing:책상",
                                                 "thing:우산"]),
    "받다": (("받는다", "받았다", "받으신다", "받으셨다"), ["letter", "thing:선물", "flower", "book",
                                                 "paper:카드", "paper:엽서", "paper:사진"]),
    "던지다": (("던진다", "던졌다", "던지신다", "던지셨다"), ["thing:공", "thing:돌", "thing:모자", "thing:풍선",
                                                 "thing:구슬"]),
    "입다": (("입는다", "입었다", "입으신다", "입으셨다"), ["clothes"]),
    "신다": (("신는다", "신었다", "신으신다", "신으셨다"), ["pair"]),
    "심다": (("심는다", "심었다", "심으신다", "심으셨다"), ["flower", "tree"]),
    "닦다": (("닦는다", "닦았다", "닦으신다", "닦으셨다"), ["thing:거울", "thing:책상", "thing:접시", "pair:구두",
                                                 "vehicle:자동차", "thing:컵"]),
    "굽다": (("굽는다", "구웠다", "구우신다", "구우셨다"), ["food:빵", "food:케이크", "food:쿠키", "food:고기",
                                                 "food:생선", "food:고구마", "food:감자"]),
    "끓이다": (("끓인다", "끓였다", "끓이신다", "끓이셨다"), ["food:국", "food:라면", "food:죽", "food:수프",
                                                 "drink:물", "drink:보리차", "drink:홍차"]),
    "자르다": (("자른다", "잘랐다", "자르신다", "자르셨다"), ["food:빵", "food:케이크", "food:수박", "food:고기",
                                                 "food:사과", "paper:종이", "food:멜론"]),
    "듣다": (("듣는다", "들었다", "들으신다", "들으셨다"), ["abstract:음악", "abstract:노래", "abstract:이야기",
                                                 "abstract:소리", "abstract:라디오", "abstract:뉴스"]),
    "배우다": (("배운다", "배웠다", "배우신다", "배우셨다"), ["abstract:한국어", "abstract:영어", "abstract:수학",
                                                 "abstract:노래", "abstract:춤"]),
    "가르치다": (("가르친다", "가르쳤다", "가르치신다", "가르치셨다"), ["abstract:한국어", "abstract:영어",
                                                         "abstract:수학", "abstract:노래", "abstract:춤"]),
    "보내다": (("보낸다", "보냈다", "보내신다", "보내셨다"), ["letter", "paper:엽서", "paper:사진", "thing:선물",
                                                 "paper:카드"]),
    "타다": (("탄다", "탔다", "타신다", "타셨다"), ["vehicle:자동차", "vehicle:버스", "vehicle:자전거", "vehicle:기차",
                                             "vehicle:비행기", "vehicle:택시", "vehicle:오토바이",
                                             "vehicle:시내버스"]),
    "청소하다": (("청소한다", "청소했다", "청소하신다", "청소하셨다"), ["place:방", "place:교실", "place:부엌",
                                                         "place:거실", "place:마당"]),
    "구경하다": (("구경한다", "구경했다", "구경하신다", "구경하셨다"), ["place:시장", "place:동물원", "place:박물관",
                                                         "place:미술관", "place:마을", "place:도시"]),
    "준비하다": (("준비한다", "준비했다", "준비하신다", "준비하셨다"), ["food", "thing:선물", "abstract:숙제"]),
    "부르다": (("부른다", "불렀다", "부르신다", "부르셨다"), ["abstract:노래"]),
}
# Motion verbs: subject goes to a place, marked with (으)로 or 에.
KO_MOTION = {
    "가다": ("간다", "갔다", "가신다", "가셨다"),
    "오다": ("온다", "왔다", "오신다", "오셨다"),
    "돌아오다": ("돌아온다", "돌아왔다", "돌아오신다", "돌아오셨다"),
    "들어가다": ("들어간다", "들어갔다", "들어가신다", "들어가셨다"),
    "떠나다": ("떠난다", "떠났다", "떠나신다", "떠나셨다"),
    "이사하다": ("이사한다", "이사했다", "이사하신다", "이사하셨다"),
    "걸어가다": ("걸어간다", "걸어갔다", "걸어가신다", "걸어가셨다"),
    "뛰어가다": ("뛰어간다", "뛰어갔다", "뛰어가신다", "뛰어가셨다"),
}
# Being somewhere: 있다 / 계시다.
KO_EXIST = ("있다", "있었다", "계신다", "계셨다")
# Verbs with an instrument in (으)로, and the instruments.
KO_INSTRUMENT = {
    "그리다": ["연필", "색연필", "붓", "볼펜"],
    "쓰다": ["연필", "볼펜", "만년필", "색연필"],
    "자르다": ["칼", "가위"],
    "먹다": ["젓가락", "숟가락", "손", "포크"],
}
KO_MEANS = ["버스", "기차", "자전거", "지하철", "비행기", "택시", "자동차", "배", "오토바이", "전철", "케이블카"]

# Adjectives for topic sentences: (plain present, honorific present), by category.
KO_ADJ = {
    "animal": [("귀엽다", None), ("작다", None), ("크다", None), ("빠르다", None), ("느리다", None), ("조용하다", None)],
    "person": [("착하다", None), ("친절하다", None), ("바쁘다", None), ("키가 크다", None), ("조용하다", None)],
    "honored": [("친절하시다", None), ("바쁘시다", None), ("건강하시다", None), ("키가 크시다", None)],
    "food": [("맛있다", None), ("달다", None), ("크다", None), ("싱싱하다", None)],
    "thing": [("작다", None), ("무겁다", None), ("가볍다", None), ("예쁘다", None), ("새것이다", None)],
    "flower": [("예쁘다", None), ("빨갛다", None), ("노랗다", None)],
    "tree": [("크다", None), ("높다", None), ("푸르다", None)],
    "place": [("넓다", None), ("조용하다", None), ("깨끗하다", None), ("멀다", None)],
}

KO_TIME_PRESENT = ["매일", "지금", "오늘", "아침마다", "주말마다", "저녁마다", "요즘", "날마다"]
KO_TIME_PAST = ["어제", "아까", "지난주에", "어제 저녁에", "오늘 아침에", "지난 주말에", "그저께", "작년에"]
KO_ADVERB = ["천천히", "빨리", "조용히", "열심히", "함께", "많이", "일찍", "늦게", "즐겁게", "다시"]
KO_FOOD_ADVERB = ["맛있게", "조금", "많이", "천천히"]
KO_DET = ["", "", "", "", "저 ", "그 ", "이 ", "우리 "]

# ---- Held out of one construction each (the minimal pairs test these) ----
# Never followed by 을/를 in the training text (seen as subjects and topics).
HELD_OUT_OBJECT = set("토끼 곰 여우 사슴 오리 원숭이 펭귄 다람쥐 악어 낙타 수달 표범 "
                      "고구마 참외 버섯 배추 레몬 자두 코알라 갈매기 딸기 호박".split())
# Never followed by 이/가 (seen as objects and topics).
HELD_OUT_SUBJECT = set("가방 우산 시계 인형 반지 거울 풍선 냄비 꽃병 단추 바구니 필통 "
                       "사전 잡지 앨범 수첩 장미 국화 백합 민들레 소나무 감나무".split())
# Never followed by 은/는.
HELD_OUT_TOPIC = set("호랑이 사자 기린 고래 하마 캥거루 늑대 부엉이 "
                     "수박 포도 만두 두부 양파 옥수수 치즈 과자".split())
# Never followed by 과/와.
HELD_OUT_AND = set("닭 염소 돼지 개구리 참새 비둘기 거북 너구리 두더지 제비 잉어 올빼미 "
                   "빵 떡 김밥 죽 귤 멜론".split())
# Places never followed by (으)로 (seen with 에 and 에서).
HELD_OUT_RO = set("도서관 병원 시장 교실 마을 시골 거실 동굴 호텔 들판 골목 서점 약국 꽃집 "
                  "체육관 연못 주차장 목욕탕 박물관 미술관".split())
# Verbs whose honorific forms the training text never has (they appear only plain).
HELD_OUT_HONORIFIC = set("읽다 씻다 그리다 만들다 닫다 심다 찾다 고치다 닦다 던지다 받다 빌리다".split())
# Nouns never counted with a numeral and classifier.
HELD_OUT_CLASSIFIER = set("토끼 사슴 기린 너구리 판다 펭귄 얼룩말 "
                          "기자 선수 소방관 이웃 조카 "
                          "사전 수첩 시집 잡지 "
                          "트럭 택시 세탁기 전화기 "
                          "엽서 우표 "
                          "코트 조끼 정장 "
                          "장화 샌들 "
                          "튤립 백합 민들레 "
                          "감나무 대나무 "
                          "볼펜 붓 "
                          "바구니 꽃병 팽이 단추 구슬 "
                          "참외 자두 레몬 멜론".split())

# ---- English ----
# noun -> plural, by category.
EN_NOUNS = {
    "animal": "cat:cats dog:dogs mouse:mice rabbit:rabbits bird:birds duck:ducks horse:horses cow:cows pig:pigs "
              "sheep:sheep goat:goats tiger:tigers lion:lions bear:bears fox:foxes wolf:wolves monkey:monkeys "
              "elephant:elephants giraffe:giraffes turtle:turtles fish:fish frog:frogs butterfly:butterflies "
              "spider:spiders squirrel:squirrels penguin:penguins whale:whales deer:deer owl:owls bee:bees "
              "puppy:puppies kitten:kittens hen:hens donkey:donkeys zebra:zebras camel:camels",
    "person": "child:children boy:boys girl:girls man:men woman:women student:students teacher:teachers "
              "friend:friends baby:babies farmer:farmers doctor:doctors nurse:nurses cook:cooks "
              "singer:singers painter:painters driver:drivers neighbour:neighbours sister:sisters "
              "brother:brothers uncle:uncles aunt:aunts player:players visitor:visitors",
    "food": "apple:apples cake:cakes cookie:cookies egg:eggs banana:bananas orange:oranges pear:pears "
            "potato:potatoes carrot:carrots sandwich:sandwiches pie:pies tomato:tomatoes peach:peaches "
            "plum:plums lemon:lemons",
    "thing": "key:keys box:boxes ball:balls bag:bags hat:hats book:books cup:cups chair:chairs table:tables "
             "lamp:lamps clock:clocks toy:toys doll:dolls door:doors window:windows bottle:bottles "
             "pencil:pencils pen:pens shoe:shoes sock:socks coat:coats umbrella:umbrellas basket:baskets "
             "letter:letters picture:pictures map:maps ring:rings spoon:spoons plate:plates bowl:bowls "
             "bicycle:bicycles car:cars bus:buses train:trains kite:kites drawer:drawers shelf:shelves "
             "cabinet:cabinets candle:candles flower:flowers tree:trees leaf:leaves stone:stones "
             "photo:photos card:cards glass:glasses pillow:pillows blanket:blankets bucket:buckets",
}
EN_NAMES = "Tom Mina Sara Ben Jisu Leo Anna Sam Lily Max Emma Noah Yuna Jack Mia Alex Nora Finn Rosa Theo".split()
EN_PLACES = "the park|the garden|the kitchen|the school|the market|the library|the forest|the river|the lake|" \
            "the beach|the farm|the zoo|the village|the city|the room|the yard|the station|the shop|the hill|" \
            "the field|the house|the classroom|the playground".split("|")
# verb -> (3rd person singular, past), and object categories (None: intransitive).
EN_VERBS = {
    "sleep": (("sleeps", "slept"), None), "play": (("plays", "played"), None), "run": (("runs", "ran"), None),
    "sing": (("sings", "sang"), None), "laugh": (("laughs", "laughed"), None), "walk": (("walks", "walked"), None),
    "wait": (("waits", "waited"), None), "rest": (("rests", "rested"), None), "dance": (("dances", "danced"), None),
    "work": (("works", "worked"), None), "swim": (("swims", "swam"), None), "jump": (("jumps", "jumped"), None),
    "eat": (("eats", "ate"), ["food"]), "like": (("likes", "liked"), ["animal", "food", "thing"]),
    "see": (("sees", "saw"), ["animal", "person", "thing"]), "find": (("finds", "found"), ["thing", "animal"]),
    "catch": (("catches", "caught"), ["animal:mouse", "animal:fish", "animal:butterfly", "animal:frog",
                                      "thing:ball", "thing:kite"]),
    "buy": (("buys", "bought"), ["food", "thing"]), "carry": (("carries", "carried"), ["thing", "food"]),
    "draw": (("draws", "drew"), ["animal", "thing"]), "wash": (("washes", "washed"), ["food", "thing"]),
    "open": (("opens", "opened"), ["thing:box", "thing:door", "thing:window", "thing:bag", "thing:drawer",
                                   "thing:bottle", "thing:cabinet"]),
    "close": (("closes", "closed"), ["thing:box", "thing:door", "thing:window", "thing:bag", "thing:drawer",
                                     "thing:cabinet"]),
    "hold": (("holds", "held"), ["thing", "animal:kitten", "animal:puppy", "person:baby"]),
    "help": (("helps", "helped"), ["person"]), "meet": (("meets", "met"), ["person"]),
    "feed": (("feeds", "fed"), ["animal"]), "chase": (("chases", "chased"), ["animal"]),
    "bring": (("brings", "brought"), ["thing", "food"]), "lose": (("loses", "lost"), ["thing"]),
    "cook": (("cooks", "cooked"), ["food:egg", "food:potato", "food:carrot", "food:tomato"]),
    "make": (("makes", "made"), ["food:cake", "food:cookie", "food:pie", "food:sandwich", "thing:kite",
                                 "thing:toy", "thing:basket"]),
    "read": (("reads", "read"), ["thing:book", "thing:letter", "thing:map", "thing:card"]),
    "paint": (("paints", "painted"), ["thing:door", "thing:chair", "thing:table", "thing:picture", "thing:box"]),
}
EN_ADJ = "old new small big red blue green yellow heavy wooden little bright dark clean broken".split()
# Predicates after an agreeing verb: (singular, plural) or a tail shared by both.
EN_PRED_BE = {
    "animal": ["hungry", "asleep", "in the garden", "very quiet", "near the door", "small", "happy", "tired"],
    "person": ["happy", "at school", "in the kitchen", "very kind", "tired", "busy", "here"],
    "food": ["on the table", "fresh", "sweet", "in the basket", "ready"],
    "thing": ["on the table", "in the box", "very old", "broken", "on the shelf", "by the door", "new",
              "under the bed", "too heavy"],
}
EN_PREPS = ["to", "near", "on", "behind", "under", "beside", "in", "of", "with", "by", "next to", "from"]
# Head nouns never seen with an attractor in the training text (seen as plain subjects).
HELD_OUT_AGREEMENT = set("key box dog cat teacher farmer apple cake chair lamp rabbit horse girl boy "
                         "bottle map basket candle owl giraffe nurse cookie".split())
# The lessons' own sentences: the teaching text holds each of them.
LESSON_SENTENCES_KO = ["고양이가 쥐를 잡았다.", "나는 어제 친구와 함께 영화를 봤다.", "저 고양이는 생선을 좋아한다."]
LESSON_SENTENCES_EN = ["The cat sat on the mat.", "The keys to the cabinet are on the table.",
                       "The animal didn't cross the street because it was too tired.",
                       "I saw the man with the telescope."]
