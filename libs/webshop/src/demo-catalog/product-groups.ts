// Vocabulary of the demo catalog: product groups in WebShop's five categories, each with the
// words its titles, descriptions, bullets, options and attributes are drawn from. Attributes are
// short lowercase phrases, like the ones in items_ins_v2.json, and always appear in the product text.

export type DemoCategory = 'beauty' | 'fashion' | 'garden' | 'grocery' | 'electronics';

/** How an attribute reads in an instruction: before the noun, or after "with" / "for". */
export type AttributePlacement = 'before' | 'with' | 'for';

export interface DemoAttribute {
  text: string;
  placement: AttributePlacement;
}

export interface DemoOptionSpec {
  /** Option name as the raw data spells it ("Color", "Size", "Flavor Name"). */
  name: string;
  values: readonly string[];
  /** How many values a product offers. */
  count: readonly [number, number];
  /** Whether values carry a swatch image URL (colours do, sizes do not). */
  withImages: boolean;
}

export interface DemoProductGroup {
  category: DemoCategory;
  productCategory: string;
  /** The Amazon search query the product was "scraped" from. */
  query: string;
  /** Title noun, singular, title case. */
  noun: string;
  descriptors: readonly string[];
  audiences: readonly string[];
  attributes: readonly DemoAttribute[];
  options: readonly DemoOptionSpec[];
  materials: readonly string[];
  /** Description sentences; {noun}, {brand}, {material}, {audience} are filled in. */
  facts: readonly string[];
  /** Bullet points as [LABEL, sentence]. */
  features: ReadonlyArray<readonly [string, string]>;
  price: readonly [number, number];
}

const before = (text: string): DemoAttribute => ({ text, placement: 'before' });
const withAttr = (text: string): DemoAttribute => ({ text, placement: 'with' });
const forAttr = (text: string): DemoAttribute => ({ text, placement: 'for' });

const option = (
  name: string,
  values: readonly string[],
  count: readonly [number, number],
  withImages = false,
): DemoOptionSpec => ({ name, values, count, withImages });

const APPAREL_COLORS = [
  'Black', 'White', 'Navy Blue', 'Heather Grey', 'Olive Green', 'Burgundy', 'Royal Blue', 'Charcoal',
  'Khaki', 'Red', 'Pink', 'Light Blue', 'Beige', 'Dark Green', 'Purple', 'Black/White',
];
const HOME_COLORS = [
  'Grey', 'Beige', 'White', 'Navy', 'Sage Green', 'Charcoal', 'Blush Pink', 'Ivory', 'Teal',
  'Walnut', 'Espresso', 'Natural', 'Black', 'Mustard Yellow', 'Light Grey',
];
const DEVICE_COLORS = ['Black', 'White', 'Silver', 'Space Grey', 'Blue', 'Red', 'Rose Gold', 'Green', 'Midnight Black'];
const LIP_SHADES = [
  'Ruby Red', 'Nude Pink', 'Berry', 'Coral', 'Mauve', 'Plum', 'Rosewood', 'Cherry', 'Peach',
  'Brick Red', 'Fuchsia', 'Caramel',
];
const CLOTHING_SIZES = ['X-Small', 'Small', 'Medium', 'Large', 'X-Large', 'XX-Large', '3X-Large'];
const SHOE_SIZES = ['6', '6.5', '7', '7.5', '8', '8.5', '9', '9.5', '10', '10.5', '11', '12', '13'];

export const DEMO_PRODUCT_GROUPS: readonly DemoProductGroup[] = [
  // beauty
  {
    category: 'beauty',
    productCategory: 'Beauty & Personal Care › Makeup › Lips › Lipstick',
    query: 'lipstick',
    noun: 'Lipstick',
    descriptors: ['Matte', 'Satin', 'Creamy', 'Velvet', 'Liquid', 'Sheer'],
    audiences: ['Women', 'Women and Girls'],
    attributes: [before('long lasting'), before('cruelty free'), before('paraben free'), before('highly pigmented'),
      before('waterproof'), withAttr('vitamin e'), withAttr('shea butter'), forAttr('dry lips'), before('vegan')],
    options: [option('Color', LIP_SHADES, [3, 8], true)],
    materials: ['shea butter', 'jojoba oil', 'beeswax', 'vitamin e'],
    facts: [
      'A rich {noun} that glides on smoothly and stays put all day.',
      'Formulated with {material} to keep lips soft and comfortable.',
      'One swipe delivers full coverage color with a {descriptor} finish.',
      'The slim bullet fits easily in a purse or makeup bag.',
      'Dermatologist tested and suitable for everyday wear.',
    ],
    features: [
      ['LONG WEAR', 'transfer resistant color that lasts up to 12 hours.'],
      ['NOURISHING', 'infused with {material} to moisturize dry lips.'],
      ['SHADES FOR EVERYONE', 'a wide range of shades to match every skin tone.'],
      ['CLEAN BEAUTY', 'no parabens, no animal testing.'],
    ],
    price: [5, 28],
  },
  {
    category: 'beauty',
    productCategory: 'Beauty & Personal Care › Hair Care › Shampoo & Conditioner › Shampoos',
    query: 'shampoo',
    noun: 'Shampoo',
    descriptors: ['Moisturizing', 'Clarifying', 'Volumizing', 'Repairing', 'Daily', 'Argan Oil'],
    audiences: ['Women', 'Men', 'Women and Men'],
    attributes: [before('sulfate free'), before('paraben free'), withAttr('natural ingredients'), forAttr('dry hair'),
      forAttr('hair growth'), forAttr('color treated hair'), withAttr('tea tree'), withAttr('argan oil'), forAttr('damaged hair')],
    options: [
      option('Scent', ['Coconut', 'Argan Oil', 'Tea Tree', 'Lavender', 'Unscented', 'Citrus', 'Rosemary Mint'], [1, 4]),
      option('Size', ['8 Fl Oz (Pack of 1)', '16.9 Fl Oz', '32 Fl Oz', '12 Fl Oz (Pack of 2)'], [1, 3]),
    ],
    materials: ['argan oil', 'keratin', 'biotin', 'aloe vera', 'tea tree oil'],
    facts: [
      'This {noun} gently cleanses without stripping natural oils.',
      'Enriched with {material} for stronger, shinier hair.',
      'Safe for daily use on all hair types.',
      'A rich lather rinses clean and leaves a light, fresh scent.',
      'Salon quality results at home.',
    ],
    features: [
      ['GENTLE CLEANSING', 'removes buildup while keeping hair soft.'],
      ['STRONGER HAIR', '{material} helps reduce breakage and split ends.'],
      ['FOR ALL HAIR TYPES', 'works on straight, wavy, curly and color treated hair.'],
      ['RECYCLABLE BOTTLE', 'packaged in a bottle made from recycled plastic.'],
    ],
    price: [6, 32],
  },
  {
    category: 'beauty',
    productCategory: 'Beauty & Personal Care › Skin Care › Face › Creams & Moisturizers › Face Moisturizers',
    query: 'face moisturizer',
    noun: 'Face Moisturizer',
    descriptors: ['Hydrating', 'Daily', 'Night', 'Lightweight', 'Anti Aging', 'Oil Control'],
    audiences: ['Women', 'Men', 'All Skin Types'],
    attributes: [forAttr('sensitive skin'), before('fragrance free'), withAttr('hyaluronic acid'), before('oil free'),
      forAttr('fine lines'), forAttr('dark spots'), before('non comedogenic'), withAttr('vitamin c'), before('dermatologist tested')],
    options: [option('Size', ['1.7 Ounce', '2.5 Fl Oz', '3.4 Fl Oz (Pack of 1)', '1 Ounce (Pack of 2)'], [1, 3])],
    materials: ['hyaluronic acid', 'niacinamide', 'vitamin c', 'ceramides', 'retinol'],
    facts: [
      'A {descriptor} cream that absorbs quickly and hydrates for 24 hours.',
      'Made with {material} to smooth and brighten skin.',
      'Wear it alone or under makeup, morning and night.',
      'Non greasy formula that suits oily, dry and combination skin.',
    ],
    features: [
      ['DEEP HYDRATION', '{material} locks in moisture all day.'],
      ['VISIBLE RESULTS', 'skin looks smoother and more even in two weeks.'],
      ['GENTLE FORMULA', 'no harsh fragrance, safe for sensitive skin.'],
      ['MADE IN USA', 'crafted in small batches.'],
    ],
    price: [9, 48],
  },
  {
    category: 'beauty',
    productCategory: 'Beauty & Personal Care › Fragrance › Women\'s › Eau de Parfum',
    query: 'perfume',
    noun: 'Eau de Parfum',
    descriptors: ['Floral', 'Fresh', 'Oriental', 'Citrus', 'Woody', 'Vanilla'],
    audiences: ['Women', 'Men', 'Unisex'],
    attributes: [before('long lasting'), withAttr('travel size'), before('cruelty free'), before('vegan'), withAttr('natural ingredients'),
      before('alcohol free'), withAttr('gift box')],
    options: [
      option('Scent', ['Rose', 'Jasmine', 'Sandalwood', 'Vanilla', 'Ocean Breeze', 'Amber', 'Bergamot'], [1, 3]),
      option('Size', ['1 Fl Oz', '1.7 Fl Oz', '3.4 Fl Oz', '0.33 Fl Oz (Travel Size)'], [1, 3]),
    ],
    materials: ['rose petals', 'sandalwood', 'bergamot', 'vanilla bean', 'white musk'],
    facts: [
      'Top notes of {material} open into a warm, elegant heart.',
      'A signature scent for day and evening.',
      'Each bottle comes in an elegant box, ready to give.',
      'A few sprays last from morning to night.',
    ],
    features: [
      ['SIGNATURE SCENT', 'blended with {material} for a memorable trail.'],
      ['LASTING WEAR', 'a long lasting fragrance that stays for hours.'],
      ['PERFECT GIFT', 'arrives in a gift box for birthdays and holidays.'],
    ],
    price: [18, 120],
  },
  {
    category: 'beauty',
    productCategory: 'Beauty & Personal Care › Personal Care › Deodorants & Antiperspirants › Deodorant',
    query: 'deodorant',
    noun: 'Deodorant',
    descriptors: ['Natural', 'Clinical', 'Fresh', 'Invisible Solid', 'Gel', 'Stick'],
    audiences: ['Men', 'Women', 'Men and Women'],
    attributes: [before('aluminum free'), forAttr('sensitive skin'), before('long lasting'), before('paraben free'),
      before('baking soda free'), withAttr('natural ingredients'), before('cruelty free')],
    options: [
      option('Scent', ['Bright Citrus', 'Calming Lavender', 'Ginger Fresh', 'Cedarwood', 'Unscented', 'Coconut'], [1, 4]),
      option('Size', ['2.65 Ounce (Pack of 1)', '3 Ounce (Pack of 2)', 'Travel Set (4-Pack)'], [1, 3]),
    ],
    materials: ['coconut oil', 'arrowroot powder', 'shea butter', 'charcoal'],
    facts: [
      'Odor protection that keeps you fresh for 48 hours.',
      'Made with {material} and no harsh chemicals.',
      'Glides on clear with no white marks on clothes.',
      'A {descriptor} formula for everyday use.',
    ],
    features: [
      ['ALL DAY FRESH', '48 hour odor protection.'],
      ['GENTLE ON SKIN', 'safe for sensitive skin and underarms.'],
      ['CLEAN INGREDIENTS', 'made with {material}.'],
    ],
    price: [4, 18],
  },
  {
    category: 'beauty',
    productCategory: 'Beauty & Personal Care › Foot, Hand & Nail Care › Nail Art & Polish › Nail Polish',
    query: 'nail polish',
    noun: 'Nail Polish Set',
    descriptors: ['Gel', 'Quick Dry', 'Glitter', 'Pastel', 'Classic', 'Chrome'],
    audiences: ['Women', 'Girls'],
    attributes: [before('non toxic'), before('quick dry'), before('long lasting'), before('cruelty free'), withAttr('high gloss'),
      withAttr('uv light'), before('easy apply')],
    options: [
      option('Color', ['Classic Red', 'Pastel Pink', 'Nude', 'Midnight Blue', 'Glitter Gold', 'Lilac', 'Mint', 'Coral'], [3, 8], true),
      option('Size', ['6 Count', '12 Count', '24 Count'], [1, 3]),
    ],
    materials: ['chip resistant formula', 'plant based formula', 'gel formula'],
    facts: [
      'A salon finish at home with a {material}.',
      'Two thin coats give rich, even color.',
      'The wide brush makes application easy.',
      'Shiny results that resist chipping for up to two weeks.',
    ],
    features: [
      ['SALON RESULTS', 'a high gloss, chip resistant finish.'],
      ['FAST DRYING', 'dries to the touch in 60 seconds.'],
      ['SAFER FORMULA', 'non toxic and free of harsh solvents.'],
    ],
    price: [6, 30],
  },
  // fashion
  {
    category: 'fashion',
    productCategory: 'Clothing, Shoes & Jewelry › Men › Clothing › Shirts › T-Shirts',
    query: "men's t-shirts",
    noun: "Men's T-Shirt",
    descriptors: ['Slim Fit', 'Crew Neck', 'V-Neck', 'Classic', 'Athletic', 'Pocket'],
    audiences: [],
    attributes: [before('slim fit'), before('short sleeve'), before('machine wash'), withAttr('cotton spandex'), before('quick drying'),
      before('moisture wicking'), before('relaxed fit'), before('long sleeve'), withAttr('button closure')],
    options: [
      option('Color', APPAREL_COLORS, [3, 8], true),
      option('Size', CLOTHING_SIZES, [3, 7]),
    ],
    materials: ['100% cotton', 'cotton spandex', 'polyester blend', 'organic cotton'],
    facts: [
      'A soft {noun} made from {material} for all day comfort.',
      'The tagless collar keeps its shape wash after wash.',
      'Easy to dress up or down for work, gym or weekends.',
      'Double stitched hems for extra durability.',
    ],
    features: [
      ['SOFT FABRIC', '{material} that feels great against the skin.'],
      ['EASY CARE', 'machine wash cold, tumble dry low.'],
      ['TRUE TO SIZE', 'see the size chart for the best fit.'],
      ['EVERYDAY STYLE', 'a wardrobe essential for any season.'],
    ],
    price: [9, 35],
  },
  {
    category: 'fashion',
    productCategory: 'Clothing, Shoes & Jewelry › Women › Clothing › Dresses › Casual',
    query: 'maxi dress',
    noun: 'Maxi Dress',
    descriptors: ['Boho', 'Floral', 'Wrap', 'Summer', 'Casual', 'Elegant'],
    audiences: ['Women'],
    attributes: [before('short sleeve'), before('long sleeve'), before('machine wash'), withAttr('pockets'), before('high waist'),
      withAttr('elastic waist'), before('button closure'), before('quick drying'), withAttr('polyester spandex')],
    options: [
      option('Color', ['Floral Blue', 'Black', 'Wine Red', 'Green Floral', 'Apricot', 'Navy Dot', 'White', 'Dusty Pink'], [3, 7], true),
      option('Size', CLOTHING_SIZES, [3, 6]),
    ],
    materials: ['linen blend', 'chiffon', 'rayon', 'polyester spandex'],
    facts: [
      'A flowing {noun} in lightweight {material}.',
      'Flattering for beach days, weddings and everyday wear.',
      'Hidden side pockets hold your phone and keys.',
      'Pair it with sandals or a denim jacket.',
    ],
    features: [
      ['BREATHABLE FABRIC', 'lightweight {material} keeps you cool.'],
      ['FLATTERING FIT', 'an elastic waist and a flowy skirt.'],
      ['OCCASIONS', 'perfect for vacation, parties and daily wear.'],
    ],
    price: [18, 60],
  },
  {
    category: 'fashion',
    productCategory: 'Clothing, Shoes & Jewelry › Men › Shoes › Athletic › Running',
    query: 'running shoes',
    noun: 'Running Shoes',
    descriptors: ['Lightweight', 'Breathable', 'Cushioned', 'Trail', 'Road', 'Mesh'],
    audiences: ['Men', 'Women'],
    attributes: [before('non slip'), withAttr('rubber sole'), before('lightweight'), before('breathable'), withAttr('memory foam'),
      withAttr('arch support'), before('slip on'), withAttr('lace up')],
    options: [
      option('Color', ['Black/White', 'Grey', 'Navy', 'All Black', 'Blue/Orange', 'White', 'Red'], [2, 6], true),
      option('Size', SHOE_SIZES, [4, 9]),
    ],
    materials: ['knit mesh', 'memory foam', 'rubber', 'eva foam'],
    facts: [
      'A breathable {material} upper keeps feet cool on long runs.',
      'Cushioned midsole absorbs impact with every step.',
      'Great for running, walking, gym training and travel.',
      'Durable rubber outsole grips wet and dry roads.',
    ],
    features: [
      ['BREATHABLE UPPER', '{material} lets air flow.'],
      ['ALL DAY COMFORT', 'cushioned insole with arch support.'],
      ['GRIP', 'non slip rubber sole for wet surfaces.'],
    ],
    price: [25, 120],
  },
  {
    category: 'fashion',
    productCategory: 'Clothing, Shoes & Jewelry › Men › Clothing › Jeans',
    query: "men's jeans",
    noun: "Men's Jeans",
    descriptors: ['Straight Leg', 'Slim Fit', 'Relaxed Fit', 'Stretch', 'Classic', 'Bootcut'],
    audiences: [],
    attributes: [before('slim fit'), before('relaxed fit'), before('machine wash'), withAttr('button closure'), withAttr('zipper closure'),
      before('stretch denim'), withAttr('five pockets')],
    options: [
      option('Color', ['Dark Wash', 'Light Wash', 'Black', 'Medium Blue', 'Grey', 'Vintage Blue'], [2, 6], true),
      option('Size', ['30W x 30L', '30W x 32L', '32W x 30L', '32W x 32L', '34W x 32L', '36W x 32L', '38W x 34L'], [3, 7]),
    ],
    materials: ['stretch denim', '100% cotton denim', 'cotton blend'],
    facts: [
      'Classic {noun} cut from {material} that moves with you.',
      'A comfortable fit through the seat and thigh.',
      'Five pocket styling with a zipper fly.',
      'Holds its color and shape after many washes.',
    ],
    features: [
      ['COMFORT STRETCH', '{material} for easy movement.'],
      ['CLASSIC LOOK', 'five pocket design goes with everything.'],
      ['DURABLE', 'reinforced stitching at stress points.'],
    ],
    price: [20, 70],
  },
  {
    category: 'fashion',
    productCategory: 'Clothing, Shoes & Jewelry › Women › Clothing › Fashion Hoodies & Sweatshirts',
    query: 'hoodie',
    noun: 'Pullover Hoodie',
    descriptors: ['Oversized', 'Fleece', 'Cropped', 'Zip Up', 'Casual', 'Heavyweight'],
    audiences: ['Women', 'Men', 'Unisex'],
    attributes: [before('long sleeve'), before('machine wash'), withAttr('drawstring closure'), withAttr('kangaroo pocket'),
      before('fleece lined'), before('relaxed fit'), before('soft material')],
    options: [
      option('Color', APPAREL_COLORS, [3, 8], true),
      option('Size', CLOTHING_SIZES, [3, 7]),
    ],
    materials: ['cotton fleece', 'french terry', 'polyester blend', 'sherpa'],
    facts: [
      'A cozy {noun} in brushed {material}.',
      'The adjustable hood and kangaroo pocket keep you warm.',
      'Ribbed cuffs and hem hold their shape.',
      'Layer it over a tee on cool days.',
    ],
    features: [
      ['WARM AND SOFT', 'brushed {material} inside.'],
      ['PRACTICAL', 'kangaroo pocket and drawstring hood.'],
      ['EASY CARE', 'machine wash cold.'],
    ],
    price: [18, 55],
  },
  {
    category: 'fashion',
    productCategory: 'Clothing, Shoes & Jewelry › Women › Shoes › Sandals › Flat',
    query: "women's sandals",
    noun: "Women's Sandals",
    descriptors: ['Flat', 'Platform', 'Slide', 'Strappy', 'Summer', 'Comfort'],
    audiences: [],
    attributes: [before('non slip'), withAttr('arch support'), before('open toe'), before('ankle strap'), withAttr('rubber sole'),
      before('lightweight'), withAttr('memory foam')],
    options: [
      option('Color', ['Black', 'Tan', 'White', 'Silver', 'Brown', 'Nude', 'Leopard'], [2, 6], true),
      option('Size', SHOE_SIZES.slice(0, 10), [4, 8]),
    ],
    materials: ['vegan leather', 'memory foam', 'cork', 'faux suede'],
    facts: [
      'Stylish {noun} with a padded {material} footbed.',
      'Adjustable straps give a secure fit.',
      'Perfect for the beach, vacation and summer days.',
      'Flexible sole for all day walking.',
    ],
    features: [
      ['CUSHIONED', '{material} footbed for comfort.'],
      ['SECURE FIT', 'adjustable buckle strap.'],
      ['GRIP', 'textured non slip sole.'],
    ],
    price: [15, 60],
  },
  // garden (home, kitchen, patio)
  {
    category: 'garden',
    productCategory: 'Home & Kitchen › Furniture › Living Room Furniture › Tables › Coffee Tables',
    query: 'coffee tables',
    noun: 'Coffee Table',
    descriptors: ['Modern', 'Rustic', 'Lift Top', 'Round', 'Farmhouse', 'Industrial'],
    audiences: [],
    attributes: [forAttr('living room'), before('easy assemble'), withAttr('storage space'), withAttr('solid wood'),
      withAttr('metal frame'), before('mid century'), before('easy clean')],
    options: [
      option('Color', HOME_COLORS, [2, 5], true),
      option('Size', ['36 Inch', '42 Inch', '47 Inch', 'Round 32 Inch'], [1, 3]),
    ],
    materials: ['solid wood', 'engineered wood', 'tempered glass', 'steel'],
    facts: [
      'A {descriptor} {noun} with a sturdy {material} top.',
      'The lower shelf gives extra storage space for books and remotes.',
      'Simple assembly with all tools included.',
      'Fits living rooms, apartments and offices.',
    ],
    features: [
      ['STURDY BUILD', '{material} supports up to 150 pounds.'],
      ['STORAGE', 'an open shelf keeps the living room tidy.'],
      ['EASY ASSEMBLY', 'numbered parts and clear instructions.'],
    ],
    price: [60, 320],
  },
  {
    category: 'garden',
    productCategory: 'Home & Kitchen › Bedding › Sheets & Pillowcases › Sheet & Pillowcase Sets',
    query: 'bed sheets',
    noun: 'Bed Sheet Set',
    descriptors: ['Microfiber', 'Cooling', 'Egyptian Cotton', 'Bamboo', 'Percale', 'Luxury'],
    audiences: [],
    attributes: [before('machine washable'), before('deep pocket'), before('wrinkle free'), before('breathable'), before('hypoallergenic'),
      before('fade resistant'), withAttr('soft material')],
    options: [
      option('Color', HOME_COLORS, [3, 8], true),
      option('Size', ['Twin', 'Full', 'Queen', 'King', 'California King'], [2, 5]),
    ],
    materials: ['brushed microfiber', 'egyptian cotton', 'bamboo viscose', 'percale cotton'],
    facts: [
      'A 4 piece {noun} in silky soft {material}.',
      'Deep pockets fit mattresses up to 16 inches.',
      'Stays cool and breathable through the night.',
      'Includes a flat sheet, a fitted sheet and two pillowcases.',
    ],
    features: [
      ['SOFT AND COOL', '{material} for a restful sleep.'],
      ['DEEP POCKET', 'the fitted sheet stays in place.'],
      ['EASY CARE', 'machine washable and wrinkle free.'],
    ],
    price: [20, 90],
  },
  {
    category: 'garden',
    productCategory: 'Home & Kitchen › Home Décor › Window Treatments › Curtains & Drapes',
    query: 'blackout curtains',
    noun: 'Blackout Curtains',
    descriptors: ['Thermal', 'Room Darkening', 'Linen Look', 'Velvet', 'Grommet', 'Rod Pocket'],
    audiences: [],
    attributes: [forAttr('living room'), forAttr('bedroom'), before('machine washable'), before('noise reducing'), before('thermal insulated'),
      before('energy saving'), withAttr('grommet top')],
    options: [
      option('Color', HOME_COLORS, [3, 8], true),
      option('Size', ['52 x 63 Inch', '52 x 84 Inch', '52 x 95 Inch', '42 x 63 Inch'], [2, 4]),
    ],
    materials: ['triple weave polyester', 'velvet', 'linen blend'],
    facts: [
      'These {noun} block up to 99% of sunlight.',
      'Thick {material} keeps rooms cool in summer and warm in winter.',
      'Two panels per package with silver grommets.',
      'Ideal for bedrooms, nurseries and home theaters.',
    ],
    features: [
      ['BLACKOUT', 'blocks light for better sleep.'],
      ['THERMAL', '{material} reduces energy bills.'],
      ['EASY CARE', 'machine washable in cold water.'],
    ],
    price: [15, 70],
  },
  {
    category: 'garden',
    productCategory: 'Home & Kitchen › Bedding › Decorative Pillows, Inserts & Covers › Throw Pillow Covers',
    query: 'throw pillow covers',
    noun: 'Throw Pillow Covers',
    descriptors: ['Boho', 'Velvet', 'Farmhouse', 'Linen', 'Striped', 'Geometric'],
    audiences: [],
    attributes: [forAttr('living room'), withAttr('hidden zipper'), before('machine washable'), before('double sided'), forAttr('couch'),
      withAttr('soft material')],
    options: [
      option('Color', HOME_COLORS, [3, 8], true),
      option('Size', ['18 x 18 Inch', '20 x 20 Inch', '12 x 20 Inch', '24 x 24 Inch'], [1, 4]),
    ],
    materials: ['soft velvet', 'cotton linen', 'chenille', 'faux fur'],
    facts: [
      'A set of 2 {noun} in {material}.',
      'An invisible zipper keeps the look clean.',
      'Refresh your sofa, bed or reading nook.',
      'Inserts are not included.',
    ],
    features: [
      ['PREMIUM FABRIC', '{material} with fine stitching.'],
      ['HIDDEN ZIPPER', 'easy to remove and wash.'],
      ['DECOR', 'matches modern and farmhouse styles.'],
    ],
    price: [8, 30],
  },
  {
    category: 'garden',
    productCategory: 'Patio, Lawn & Garden › Watering Equipment › Garden Hoses',
    query: 'garden hose',
    noun: 'Garden Hose',
    descriptors: ['Expandable', 'Heavy Duty', 'Flexible', 'Lightweight', 'Kink Free', 'Coiled'],
    audiences: [],
    attributes: [before('heavy duty'), before('leak proof'), before('lightweight'), withAttr('spray nozzle'), withAttr('brass fittings'),
      before('kink free'), before('easy store')],
    options: [option('Size', ['25 FT', '50 FT', '75 FT', '100 FT'], [2, 4])],
    materials: ['latex core', 'solid brass', 'polyester fabric'],
    facts: [
      'This {noun} expands up to three times its length under pressure.',
      'Solid {material} fittings resist rust and leaks.',
      'Includes a 10 pattern spray nozzle for watering, washing and cleaning.',
      'Shrinks back for easy storage after use.',
    ],
    features: [
      ['DURABLE', '{material} with double layer protection.'],
      ['NO KINKS', 'flexible design does not tangle.'],
      ['10 SPRAY PATTERNS', 'from mist to jet.'],
    ],
    price: [18, 70],
  },
  {
    category: 'garden',
    productCategory: 'Patio, Lawn & Garden › Outdoor Décor › Outdoor String Lights',
    query: 'string lights',
    noun: 'Outdoor String Lights',
    descriptors: ['Solar', 'LED', 'Edison Bulb', 'Globe', 'Fairy', 'Warm White'],
    audiences: [],
    attributes: [before('waterproof'), before('energy saving'), withAttr('remote control'), before('solar powered'), forAttr('patio'),
      before('shatterproof'), before('dimmable')],
    options: [
      option('Color', ['Warm White', 'Multicolor', 'Cool White', 'Soft White'], [1, 3], true),
      option('Size', ['25 FT', '48 FT', '100 FT', '2 Pack 50 FT'], [1, 3]),
    ],
    materials: ['shatterproof plastic bulbs', 'weatherproof cable', 'led bulbs'],
    facts: [
      '{noun} that turn a backyard into a cozy space.',
      'Weatherproof {material} for year round outdoor use.',
      'Connect up to 10 strands end to end.',
      'Low power use keeps the bill down.',
    ],
    features: [
      ['WEATHERPROOF', 'rated for rain and snow.'],
      ['SAFE', '{material} will not break if dropped.'],
      ['CONNECTABLE', 'link several strands together.'],
    ],
    price: [15, 80],
  },
  // grocery
  {
    category: 'grocery',
    productCategory: 'Grocery & Gourmet Food › Beverages › Coffee, Tea & Cocoa › Coffee › Whole Coffee Beans',
    query: 'whole bean coffee',
    noun: 'Whole Bean Coffee',
    descriptors: ['Dark Roast', 'Medium Roast', 'Light Roast', 'Espresso', 'Colombian', 'French Roast'],
    audiences: [],
    attributes: [before('usda organic'), before('non gmo'), before('fair trade'), before('low acid'), before('kosher'),
      before('gluten free'), before('single origin')],
    options: [
      option('Flavor Name', ['Dark Roast', 'Medium Roast', 'Breakfast Blend', 'Espresso', 'Hazelnut', 'Vanilla'], [1, 4]),
      option('Size', ['12 Ounce', '2 Pound', '12 Ounce (Pack of 2)', '5 Pound Bag'], [1, 3]),
    ],
    materials: ['arabica beans', 'high altitude beans', 'small batch roasted beans'],
    facts: [
      'Rich {noun} made from 100% {material}.',
      'Notes of dark chocolate, caramel and toasted nuts.',
      'Grind fresh for drip, pour over, french press or espresso.',
      'Roasted in small batches and packed in a resealable bag.',
    ],
    features: [
      ['BOLD FLAVOR', 'smooth body with a clean finish.'],
      ['QUALITY BEANS', '{material} from trusted farms.'],
      ['FRESHNESS', 'one way valve bag keeps beans fresh.'],
    ],
    price: [8, 45],
  },
  {
    category: 'grocery',
    productCategory: 'Grocery & Gourmet Food › Beverages › Coffee, Tea & Cocoa › Tea › Green Tea',
    query: 'green tea',
    noun: 'Green Tea Bags',
    descriptors: ['Jasmine', 'Matcha', 'Sencha', 'Mint', 'Lemon Ginger', 'Decaf'],
    audiences: [],
    attributes: [before('usda organic'), before('caffeine free'), before('non gmo'), before('sugar free'), before('gluten free'),
      before('kosher'), withAttr('natural ingredients')],
    options: [
      option('Flavor Name', ['Jasmine', 'Mint', 'Lemon Ginger', 'Pure Green', 'Honey', 'Peach'], [1, 4]),
      option('Size', ['20 Count (Pack of 6)', '100 Count', '40 Count', '20 Count (Pack of 1)'], [1, 3]),
    ],
    materials: ['whole leaf green tea', 'organic tea leaves', 'matcha powder'],
    facts: [
      'Smooth {noun} made with {material}.',
      'A light, refreshing cup without bitterness.',
      'Each bag is individually wrapped for freshness.',
      'Steep for three minutes in hot water.',
    ],
    features: [
      ['PURE TASTE', '{material} with no artificial flavors.'],
      ['ANTIOXIDANTS', 'naturally rich in antioxidants.'],
      ['CONVENIENT', 'individually wrapped tea bags.'],
    ],
    price: [4, 25],
  },
  {
    category: 'grocery',
    productCategory: 'Grocery & Gourmet Food › Snack Foods › Bars › Protein Bars',
    query: 'protein bars',
    noun: 'Protein Bars',
    descriptors: ['Chocolate Chip', 'Peanut Butter', 'Keto', 'Vegan', 'Crunchy', 'Chewy'],
    audiences: [],
    attributes: [before('high protein'), before('gluten free'), before('low carb'), before('keto friendly'), before('low sugar'),
      before('individually wrapped'), before('non gmo'), before('plant based')],
    options: [
      option('Flavor Name', ['Chocolate Chip', 'Peanut Butter', 'Cookies and Cream', 'Salted Caramel', 'Birthday Cake', 'Almond'], [1, 5]),
      option('Size', ['12 Count', '24 Count', '12 Count (Pack of 2)'], [1, 3]),
    ],
    materials: ['whey protein', 'pea protein', 'almond butter', 'whole grain oats'],
    facts: [
      '{noun} packed with 20 grams of {material}.',
      'A satisfying snack before or after workouts.',
      'Only 2 grams of sugar per bar.',
      'Great for school, office, hiking and travel.',
    ],
    features: [
      ['20G PROTEIN', 'made with {material}.'],
      ['LOW SUGAR', 'sweetened naturally.'],
      ['ON THE GO', 'individually wrapped bars.'],
    ],
    price: [10, 40],
  },
  {
    category: 'grocery',
    productCategory: 'Grocery & Gourmet Food › Snack Foods › Jerky & Dried Meats › Beef Jerky',
    query: 'beef jerky',
    noun: 'Beef Jerky',
    descriptors: ['Original', 'Teriyaki', 'Peppered', 'Sweet and Spicy', 'Smoked', 'Hickory'],
    audiences: [],
    attributes: [before('high protein'), before('gluten free'), before('low fat'), before('grass fed'), before('keto friendly'),
      before('msg free'), before('ready to eat')],
    options: [
      option('Flavor Name', ['Original', 'Teriyaki', 'Peppered', 'Sweet and Spicy', 'Hickory Smoked'], [1, 4]),
      option('Size', ['3.25 Ounce (Pack of 4)', '10 Ounce', '2.85 Ounce', '1 Pound'], [1, 3]),
    ],
    materials: ['grass fed beef', '100% lean beef', 'premium beef'],
    facts: [
      'Tender {noun} made from {material}, slow smoked for flavor.',
      'A protein packed snack for road trips and camping.',
      'Marinated in a blend of spices and sea salt.',
      'Resealable bag keeps it fresh.',
    ],
    features: [
      ['REAL BEEF', '{material} with no fillers.'],
      ['HIGH PROTEIN', '11 grams of protein per serving.'],
      ['SMALL BATCH', 'slow smoked over hardwood.'],
    ],
    price: [6, 35],
  },
  {
    category: 'grocery',
    productCategory: 'Grocery & Gourmet Food › Pantry Staples › Cooking Oils › Olive Oil',
    query: 'olive oil',
    noun: 'Extra Virgin Olive Oil',
    descriptors: ['Cold Pressed', 'Italian', 'Greek', 'Spanish', 'First Harvest', 'Robust'],
    audiences: [],
    attributes: [before('cold pressed'), before('usda organic'), before('non gmo'), before('kosher'), before('gluten free'),
      withAttr('glass bottle'), before('single origin')],
    options: [option('Size', ['16.9 Fl Oz', '25.3 Fl Oz', '33.8 Fl Oz', '101 Fl Oz'], [1, 3])],
    materials: ['hand picked olives', 'early harvest olives', 'koroneiki olives'],
    facts: [
      '{noun} pressed from {material} within hours of harvest.',
      'Fruity aroma with a peppery finish.',
      'Perfect for salads, dipping bread and cooking.',
      'Bottled in dark glass to protect the flavor.',
    ],
    features: [
      ['COLD PRESSED', 'from {material}.'],
      ['VERSATILE', 'for dressing, sauteing and baking.'],
      ['DARK GLASS', 'protects from light.'],
    ],
    price: [9, 45],
  },
  {
    category: 'grocery',
    productCategory: 'Grocery & Gourmet Food › Candy & Chocolate › Chocolate Bars',
    query: 'dark chocolate',
    noun: 'Dark Chocolate Bar',
    descriptors: ['70% Cacao', '85% Cacao', 'Sea Salt', 'Almond', 'Mint', 'Orange'],
    audiences: [],
    attributes: [before('sugar free'), before('dairy free'), before('gluten free'), before('non gmo'), before('fair trade'),
      before('keto friendly'), before('vegan')],
    options: [
      option('Flavor Name', ['Sea Salt', 'Almond', 'Mint', 'Orange', 'Raspberry', 'Espresso'], [1, 4]),
      option('Size', ['3 Ounce (Pack of 6)', '3.5 Ounce (Pack of 12)', '1.4 Ounce (Pack of 10)'], [1, 3]),
    ],
    materials: ['single origin cacao', 'fair trade cocoa beans', 'organic cacao'],
    facts: [
      'A smooth {noun} crafted from {material}.',
      'Rich and intense with a clean snap.',
      'A little square satisfies a sweet craving.',
      'Makes a thoughtful gift for chocolate lovers.',
    ],
    features: [
      ['RICH FLAVOR', '{material} for deep flavor.'],
      ['CLEAN INGREDIENTS', 'no artificial flavors or preservatives.'],
      ['GIFTABLE', 'beautifully wrapped bars.'],
    ],
    price: [6, 40],
  },
  // electronics
  {
    category: 'electronics',
    productCategory: 'Electronics › Headphones, Earbuds & Accessories › Earbud Headphones',
    query: 'wireless earbuds',
    noun: 'Wireless Earbuds',
    descriptors: ['True Wireless', 'Sport', 'Bluetooth 5.3', 'Mini', 'Open Ear', 'Premium'],
    audiences: [],
    attributes: [withAttr('noise cancelling'), before('wireless bluetooth'), withAttr('charging case'), before('water resistant'),
      withAttr('long battery life'), before('hands free'), before('fast charging'), withAttr('built in microphone')],
    options: [option('Color', DEVICE_COLORS, [1, 4], true)],
    materials: ['bluetooth 5.3 chip', '13mm drivers', 'graphene drivers'],
    facts: [
      '{noun} with {material} for rich bass and clear calls.',
      'Up to 36 hours of playtime with the charging case.',
      'Touch controls for music, calls and voice assistant.',
      'Ergonomic fit stays in during workouts.',
    ],
    features: [
      ['IMMERSIVE SOUND', '{material} for deep bass.'],
      ['ALL DAY BATTERY', 'fast charging gives 2 hours in 10 minutes.'],
      ['SWEATPROOF', 'ipx7 water resistant.'],
    ],
    price: [15, 150],
  },
  {
    category: 'electronics',
    productCategory: 'Electronics › Portable Audio & Video › Portable Speakers & Docks › Portable Bluetooth Speakers',
    query: 'bluetooth speaker',
    noun: 'Bluetooth Speaker',
    descriptors: ['Portable', 'Waterproof', 'Mini', 'Outdoor', 'Party', 'Stereo'],
    audiences: [],
    attributes: [before('wireless bluetooth'), before('water resistant'), withAttr('long battery life'), withAttr('stereo sound'),
      before('hands free'), withAttr('usb port'), before('easy carry')],
    options: [option('Color', DEVICE_COLORS, [1, 5], true)],
    materials: ['dual drivers', 'passive radiator', '20w drivers'],
    facts: [
      'A {noun} with {material} and loud, clear sound.',
      '24 hour battery life keeps the party going.',
      'Pair two speakers for true stereo sound.',
      'Built to survive splashes, dust and drops.',
    ],
    features: [
      ['BIG SOUND', '{material} for powerful bass.'],
      ['WATERPROOF', 'ipx7 rated for pool and beach.'],
      ['LONG PLAYTIME', 'up to 24 hours per charge.'],
    ],
    price: [20, 180],
  },
  {
    category: 'electronics',
    productCategory: 'Cell Phones & Accessories › Cases, Holsters & Sleeves › Basic Cases',
    query: 'phone case',
    noun: 'Phone Case',
    descriptors: ['Slim', 'Clear', 'Rugged', 'Leather Wallet', 'Silicone', 'Magnetic'],
    audiences: [],
    attributes: [before('shockproof'), before('slim fit'), withAttr('card holder'), before('wireless charging compatible'),
      withAttr('screen protector'), before('anti scratch'), before('military grade')],
    options: [
      option('Color', ['Clear', 'Black', 'Navy Blue', 'Pink', 'Purple', 'Forest Green', 'Red'], [2, 6], true),
      option('Style', ['iPhone 15', 'iPhone 15 Pro', 'iPhone 14', 'Galaxy S24', 'Pixel 8'], [1, 4]),
    ],
    materials: ['tpu bumper', 'polycarbonate back', 'liquid silicone', 'vegan leather'],
    facts: [
      'A {descriptor} {noun} with a {material}.',
      'Raised edges protect the screen and camera.',
      'Precise cutouts for buttons, ports and speakers.',
      'Works with wireless chargers without removing the case.',
    ],
    features: [
      ['DROP PROTECTION', '{material} absorbs shocks.'],
      ['SLIM DESIGN', 'adds little bulk.'],
      ['PERFECT FIT', 'precise cutouts.'],
    ],
    price: [6, 40],
  },
  {
    category: 'electronics',
    productCategory: 'Electronics › Computers & Accessories › Computer Accessories & Peripherals › Cables & Accessories › Cables › USB Cables',
    query: 'usb c cable',
    noun: 'USB C Cable',
    descriptors: ['Braided', 'Fast Charging', 'Right Angle', 'Short', 'Long', 'Magnetic'],
    audiences: [],
    attributes: [before('fast charging'), before('high speed'), before('nylon braided'), before('durable'), withAttr('data transfer'),
      before('tangle free')],
    options: [
      option('Color', ['Black', 'White', 'Grey', 'Red', 'Blue'], [1, 4], true),
      option('Size', ['3.3 FT', '6.6 FT', '10 FT', '3 Pack (3/6/10 FT)'], [1, 4]),
    ],
    materials: ['nylon braid', 'aluminum connectors', 'tinned copper wire'],
    facts: [
      'A {noun} with {material} that survives 20,000 bends.',
      'Charges phones, tablets and laptops at up to 100W.',
      'Transfers data at up to 480 Mbps.',
      'Works with most USB C devices.',
    ],
    features: [
      ['FAST CHARGING', 'up to 100W power delivery.'],
      ['DURABLE', '{material} resists fraying.'],
      ['WIDE COMPATIBILITY', 'for phones, tablets and laptops.'],
    ],
    price: [5, 25],
  },
  {
    category: 'electronics',
    productCategory: 'Cell Phones & Accessories › Chargers & Power Adapters › Portable Power Banks',
    query: 'power bank',
    noun: 'Portable Charger',
    descriptors: ['Slim', 'Magnetic', 'Solar', 'Compact', 'High Capacity', 'Wireless'],
    audiences: [],
    attributes: [before('fast charging'), before('wireless charging'), withAttr('led display'), before('easy carry'), withAttr('usb port'),
      withAttr('long battery life'), before('lightweight')],
    options: [
      option('Color', ['Black', 'White', 'Blue', 'Pink'], [1, 3], true),
      option('Capacity', ['5000mAh', '10000mAh', '20000mAh', '26800mAh'], [1, 3]),
    ],
    materials: ['lithium polymer cells', 'smart charging chip', 'aluminum shell'],
    facts: [
      'A {noun} with {material} that charges two devices at once.',
      'Charges most phones three times on a full battery.',
      'Small enough for a pocket or purse.',
      'Approved for carry on luggage.',
    ],
    features: [
      ['HIGH CAPACITY', '{material} for several full charges.'],
      ['FAST CHARGING', '22.5W output.'],
      ['SAFE', 'protection against overcharging and short circuits.'],
    ],
    price: [12, 70],
  },
  {
    category: 'electronics',
    productCategory: 'Electronics › Television & Video › Accessories › TV Mounts, Stands & Turntables › TV Wall & Ceiling Mounts',
    query: 'tv wall mount',
    noun: 'TV Wall Mount',
    descriptors: ['Full Motion', 'Tilting', 'Fixed', 'Swivel', 'Low Profile', 'Heavy Duty'],
    audiences: [],
    attributes: [before('easy install'), before('heavy duty'), before('wall mounted'), withAttr('cable management'), before('full motion'),
      withAttr('bubble level')],
    options: [option('Size', ['26-55 Inch', '32-65 Inch', '42-70 Inch', '37-85 Inch'], [1, 3])],
    materials: ['cold rolled steel', 'steel arms', 'powder coated steel'],
    facts: [
      'A {descriptor} {noun} built from {material}.',
      'Tilt and swivel to cut glare from any seat.',
      'Holds up to 132 pounds and fits most TVs.',
      'Installs in under 30 minutes with the included hardware.',
    ],
    features: [
      ['STRONG', '{material} holds up to 132 lbs.'],
      ['FLEXIBLE VIEWING', 'tilt, swivel and extend.'],
      ['EASY INSTALL', 'all hardware and a template included.'],
    ],
    price: [18, 90],
  },
  {
    category: 'electronics',
    productCategory: 'Electronics › Computers & Accessories › Computer Accessories & Peripherals › Keyboards, Mice & Accessories › Mice',
    query: 'wireless mouse',
    noun: 'Wireless Mouse',
    descriptors: ['Ergonomic', 'Silent', 'Vertical', 'Rechargeable', 'Compact', 'Gaming'],
    audiences: [],
    attributes: [before('wireless bluetooth'), before('silent click'), before('rechargeable'), before('ergonomic'), withAttr('usb receiver'),
      withAttr('long battery life'), before('plug and play')],
    options: [option('Color', DEVICE_COLORS, [1, 5], true)],
    materials: ['2.4g wireless receiver', 'optical sensor', 'soft rubber grip'],
    facts: [
      'A {noun} with an {material} that tracks on most surfaces.',
      'Quiet buttons for offices, libraries and late nights.',
      'Works with Windows, Mac, Chromebook and Linux.',
      'One charge lasts for weeks of use.',
    ],
    features: [
      ['QUIET CLICKS', 'silent buttons reduce noise.'],
      ['COMFORT', 'ergonomic shape with {material}.'],
      ['PLUG AND PLAY', 'no drivers needed.'],
    ],
    price: [8, 50],
  },
];

export const DEMO_BRAND_SYLLABLES: readonly (readonly string[])[] = [
  ['Nor', 'Vel', 'Ari', 'Lum', 'Zen', 'Kor', 'Bel', 'Sol', 'Tri', 'Oak', 'Mar', 'Cal', 'Fen', 'Ivo', 'Rho', 'Sky'],
  ['ora', 'ex', 'ify', 'io', 'ara', 'ton', 'ly', 'ique', 'wave', 'field', 'wick', 'vista', 'bloom', 'crest', 'dale', 'nova'],
];

export const DEMO_GENERIC_SENTENCES: readonly string[] = [
  'Satisfaction guaranteed: contact us with any question and we will reply within 24 hours.',
  'A thoughtful gift for family and friends.',
  'Backed by a 1 year warranty.',
  'Ships in recyclable packaging.',
  'Thousands of happy customers trust {brand}.',
  'Designed in California.',
];
